"""Seed a large, realistic classroom on PostgreSQL for `make bench`: students, courses,
exercises, a million graded submissions, quiz attempts, and the best-per-student rows and
item scores that the verdict transaction would have kept. Rows go in by COPY."""

from __future__ import annotations

import json
import math
import random
import time
from argparse import ArgumentParser
from collections.abc import Iterable, Iterator, Sequence
from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, OutputWrapper
from django.db import connection, transaction
from django.db.models import Model
from django.utils import timezone

from accounts.models import User
from catalog.models import Exercise, ExerciseVersion
from courses.models import Assignment, AssignmentItem, Course, ItemScore, Membership
from grading.models import Submission
from leaderboards.models import Entry
from quizzes.models import Bank, QuizAttempt

VERDICTS = ("WRONG_ANSWER", "RUNTIME_ERROR", "TOO_SLOW", "PARTIAL", "TIME_LIMIT")


class Command(BaseCommand):
    help = "Seed a large classroom (PostgreSQL only) for the leaderboard and gradebook benchmark."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--students", type=int, default=20_000)
        parser.add_argument("--courses", type=int, default=50)
        parser.add_argument("--exercises", type=int, default=15)
        parser.add_argument("--submissions", type=int, default=1_000_000)
        parser.add_argument("--quiz-attempts", type=int, default=200_000)
        parser.add_argument("--big-course", type=int, default=500, help="students in the first course")
        parser.add_argument("--seed", type=int, default=14)

    def handle(self, *args: Any, **o: Any) -> None:
        if connection.vendor != "postgresql":
            raise CommandError("seed_classroom writes with COPY: point DATABASE_URL at PostgreSQL")
        if User.objects.filter(username__startswith="bench-").exists():
            raise CommandError("this database is seeded already")
        started = time.monotonic()
        rng = random.Random(o["seed"])
        with transaction.atomic():
            seed(rng, o, self.stdout)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        self.stdout.write(f"seeded in {time.monotonic() - started:.0f} s")


def copy(table: str, columns: list[str], rows: Iterable[Sequence[object]]) -> None:
    with connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as writer:
            for row in rows:
                writer.write_row(row)


def next_ids(model: type[Model], n: int) -> range | list[int]:
    """Reserve n ids of a table's sequence, so rows written by COPY can be referred to."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)", [model._meta.db_table, n]
        )
        ids = [r[0] for r in cursor.fetchall()]
    return range(ids[0], ids[0] + n) if ids == list(range(ids[0], ids[0] + n)) else ids


def seed(rng: random.Random, o: dict[str, Any], out: OutputWrapper) -> None:
    now = timezone.now()
    n_students, n_courses = o["students"], o["courses"]
    # Users: instructors, then students; a password nobody can use.
    user_ids = next_ids(User, n_students + n_courses)
    copy(
        User._meta.db_table,
        [
            "id",
            "password",
            "is_superuser",
            "username",
            "first_name",
            "last_name",
            "email",
            "is_staff",
            "is_active",
            "date_joined",
            "role",
            "pseudonym",
            "hide_from_public_boards",
        ],
        (
            (
                uid,
                "!",
                False,
                f"bench-{i:05}",
                f"Given{i}",
                f"Family{i % 997}",
                f"bench{i}@example.org",
                i < n_courses,
                True,
                now,
                "instructor" if i < n_courses else "student",
                f"bench-pseudonym-{i:05}",
                i % 50 == 0,
            )
            for i, uid in enumerate(user_ids)
        ),
    )
    instructors, students = list(user_ids[:n_courses]), list(user_ids[n_courses:])
    out.write(f"users: {len(user_ids)}")

    exercises = []
    for e in range(o["exercises"]):
        ex = Exercise.objects.create(slug=f"bench-exercise-{e:02}", uid=f"bench-exercise-{e:02}")
        ex.current_version = ExerciseVersion.objects.create(
            exercise=ex,
            number=1,
            declared_version=1,
            digest=f"bench-{e}",
            title_en=f"Bench exercise {e}",
            title_zh=f"基准练习 {e}",
            summary_en="",
            summary_zh="",
            statement_en="",
            statement_zh="",
            starter="",
            difficulty="medium",
            points=10,
            files={},
        )
        ex.save(update_fields=["current_version"])
        exercises.append(ex)
    bank = Bank.objects.create(
        uid="bench-bank",
        source="bench",
        title_en="Bench quiz",
        title_zh="基准测验",
        description_en="",
        description_zh="",
    )

    # Courses: the first has `big_course` students, the rest share the others evenly.
    courses = Course.objects.bulk_create(
        [
            Course(
                title_en=f"Bench course {c}",
                title_zh=f"基准课程 {c}",
                term="Spring 2027",
                join_code=f"BENCH{c:03}",
                created_by_id=instructors[c],
            )
            for c in range(n_courses)
        ]
    )
    course_of: dict[int, int] = {}
    rest = students[o["big_course"] :]
    for s in students[: o["big_course"]]:
        course_of[s] = courses[0].id
    per = math.ceil(len(rest) / max(1, n_courses - 1))
    for i, s in enumerate(rest):
        course_of[s] = courses[1 + i // per].id
    copy(
        Membership._meta.db_table,
        ["course_id", "user_id", "role", "joined_at", "pseudonym"],
        [(c.id, instructors[i], "instructor", now, f"bench-staff-{i:05}") for i, c in enumerate(courses)]
        + [(c, s, "student", now, f"bench-member-{s}") for s, c in course_of.items()],
    )
    # Each course: 5 assignments of 3 exercises and a quiz.
    items_of: dict[int, list[AssignmentItem]] = {}
    for course in courses:
        assignments = Assignment.objects.bulk_create(
            [
                Assignment(
                    course=course,
                    position=a + 1,
                    title_en=f"Week {a + 1}",
                    title_zh=f"第 {a + 1} 周",
                    opens_at=now - timedelta(days=60),
                    due_at=now + timedelta(days=30),
                )
                for a in range(5)
            ]
        )
        items = []
        for a, assignment in enumerate(assignments):
            for k in range(3):
                ex = exercises[(a * 3 + k) % len(exercises)]
                items.append(
                    AssignmentItem(
                        assignment=assignment,
                        position=k + 1,
                        kind="exercise",
                        exercise_version_id=ex.current_version_id,
                        points=10,
                    )
                )
        items.append(AssignmentItem(assignment=assignments[-1], position=4, kind="quiz", bank=bank, points=10))
        items_of[course.id] = AssignmentItem.objects.bulk_create(items)
    out.write(f"courses: {len(courses)}, exercises: {len(exercises)}")

    # Submissions: popular exercises get more; each student's best is tracked as we go.
    weights = [1 / (e + 1) ** 0.5 for e in range(len(exercises))]
    best: dict[tuple[int, int], tuple] = {}
    sub_ids = next_ids(Submission, o["submissions"])

    def submissions() -> Iterator[tuple[object, ...]]:
        for sid in sub_ids:
            s = students[rng.randrange(len(students))]
            e = rng.choices(range(len(exercises)), weights)[0]
            version = exercises[e].current_version_id
            created = now - timedelta(minutes=rng.randrange(60 * 24 * 50))
            accepted = rng.random() < 0.45
            score = 1.0 if accepted else round(rng.choice((0.0, 0.0, 0.25, 0.5, 0.75)), 2)
            verdict = "ACCEPTED" if accepted else rng.choice(VERDICTS)
            ratio = round(rng.lognormvariate(0, 0.35), 3) if accepted else None
            perf = (
                {
                    "cases": [
                        {
                            "name": "speed",
                            "ratio": ratio,
                            "interval": [round(ratio * 0.93, 3), round(ratio * 1.08, 3)],
                            "decision": "pass",
                        }
                    ]
                }
                if ratio is not None  # accepted
                else None
            )
            checks = [
                {"name": "forward_values", "passed": score > 0},
                {"name": "gradients_match", "passed": score >= 0.75},
            ]
            code = f"# bench submission {sid}\nclass StaticGraph: ...\n"
            key = (s, e)
            current = best.get(key)
            if current is None or (score, -(ratio or 0)) > (current[1], -(current[2] or 0)):
                best[key] = (sid, score, ratio, created, code)
            yield (
                sid,
                s,
                version,
                code,
                "graded",
                verdict,
                score,
                json.dumps({"verdict": verdict, "score": score, "checks": checks, "perf": perf}),
                1,
                created,
                created,
                created + timedelta(seconds=20),
                "",
            )

    copy(
        Submission._meta.db_table,
        [
            "id",
            "user_id",
            "exercise_version_id",
            "code",
            "status",
            "verdict",
            "score",
            "result",
            "attempts",
            "created_at",
            "started_at",
            "finished_at",
            "idempotency_key",
        ],
        submissions(),
    )
    out.write(f"submissions: {len(sub_ids)}")
    copy(
        Entry._meta.db_table,
        [
            "user_id",
            "exercise_id",
            "exercise_version_id",
            "submission_id",
            "code_digest",
            "score",
            "ratio",
            "ratio_low",
            "ratio_high",
            "pool",
            "achieved_at",
        ],
        (
            (
                s,
                exercises[e].id,
                exercises[e].current_version_id,
                sid,
                f"{sid:064x}",
                score,
                ratio,
                round(ratio * 0.93, 3) if ratio else None,
                round(ratio * 1.08, 3) if ratio else None,
                json.dumps([[ratio, round(ratio * 0.93, 3), round(ratio * 1.08, 3)]] if ratio else []),
                created,
            )
            for (s, e), (sid, score, ratio, created, _code) in best.items()
        ),
    )
    out.write(f"entries: {len(best)}")

    quiz_share: dict[int, float] = {}

    def attempts() -> Iterator[tuple[object, ...]]:
        for _ in range(o["quiz_attempts"]):
            s = students[rng.randrange(len(students))]
            score = float(rng.randrange(11))
            quiz_share[s] = max(quiz_share.get(s, 0.0), score / 10)
            started = now - timedelta(minutes=rng.randrange(60 * 24 * 50))
            yield (
                s,
                "bank",
                bank.id,
                "{}",
                rng.randrange(2**31),
                started,
                started + timedelta(minutes=15),
                "finished",
                score,
                10.0,
            )

    copy(
        QuizAttempt._meta.db_table,
        ["user_id", "kind", "bank_id", "filters", "seed", "started_at", "finished_at", "status", "score", "max_score"],
        attempts(),
    )
    out.write(f"quiz attempts: {o['quiz_attempts']}")

    index = {ex.current_version_id: e for e, ex in enumerate(exercises)}

    def scores() -> Iterator[tuple[object, ...]]:
        for s, c in course_of.items():
            for item in items_of[c]:
                if item.kind == "quiz":
                    if s in quiz_share:
                        yield (item.id, s, quiz_share[s] * item.points, 0, 0, 1, None, None, now)
                    continue
                got = best.get((s, index[item.exercise_version_id]))
                if got:
                    yield (item.id, s, got[1] * item.points, 0, 0, 1, got[0], None, now)

    copy(
        ItemScore._meta.db_table,
        [
            "item_id",
            "user_id",
            "points",
            "days_late",
            "late_refused",
            "attempts",
            "submission_id",
            "override_points",
            "updated_at",
        ],
        scores(),
    )
    out.write("item scores written")

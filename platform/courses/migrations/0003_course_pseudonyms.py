import accounts.pseudonyms
from django.conf import settings
from django.db import migrations, models


def give_every_membership_its_own_name(apps, schema_editor):
    """Each existing member gets a fresh name, unique in its course (AddField's default would
    give every row the same one)."""
    Membership = apps.get_model("courses", "Membership")
    taken: dict[int, set[str]] = {}
    for membership in Membership.objects.only("id", "course_id").iterator():
        names = taken.setdefault(membership.course_id, set())
        name = accounts.pseudonyms.pseudonym_generate()
        while name in names:
            name = accounts.pseudonyms.pseudonym_generate()
        names.add(name)
        Membership.objects.filter(pk=membership.pk).update(pseudonym=name)


class Migration(migrations.Migration):

    dependencies = [
        ("courses", "0002_invitations"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="membership",
            name="pseudonym",
            field=models.CharField(default="", max_length=40, verbose_name="name on this course's boards"),
        ),
        migrations.RunPython(give_every_membership_its_own_name, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="membership",
            name="pseudonym",
            field=models.CharField(
                default=accounts.pseudonyms.pseudonym_generate,
                max_length=40,
                verbose_name="name on this course's boards",
            ),
        ),
        migrations.AddConstraint(
            model_name="membership",
            constraint=models.UniqueConstraint(fields=("course", "pseudonym"), name="unique_course_pseudonym"),
        ),
    ]

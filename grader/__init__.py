"""How a submission is judged, by audience:

    contract.py      what the judge and the host agree on (shipped into every sandbox run), and
                     an exercise's rules at run time: the student's process never holds a banned
                     module (it runs before the harness package is imported)
    content_root.py  exercises/ as every reader of it sees it
    host/            the host side: exercise specs, the pipeline, verdicts, validation, zip intake
    harness/         the in-sandbox judge, its workers and the checks API
    engines/         the reference engines (shipped with the exercises that import them)
    quizzes/         quiz banks and interview templates
    lessons/         the article's lessons and the engine traces their pages play
    glossary.py      the bilingual glossary and its lint

Kept free of imports: the harness runs this package inside the sandbox, where only the
standard library, numpy and torch exist.
"""

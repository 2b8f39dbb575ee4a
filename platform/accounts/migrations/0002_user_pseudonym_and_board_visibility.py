from django.db import migrations, models

import accounts.pseudonyms


def give_every_user_a_pseudonym(apps, schema_editor):
    User = apps.get_model("accounts", "User")
    taken = set()
    for user in User.objects.all().only("id"):
        name = accounts.pseudonyms.pseudonym_generate()
        while name in taken:
            name = accounts.pseudonyms.pseudonym_generate()
        taken.add(name)
        User.objects.filter(pk=user.pk).update(pseudonym=name)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="user", name="pseudonym", field=models.CharField(max_length=40, default="", verbose_name="pseudonym")
        ),
        migrations.RunPython(give_every_user_a_pseudonym, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="user",
            name="pseudonym",
            field=models.CharField(
                default=accounts.pseudonyms.pseudonym_generate, max_length=40, unique=True, verbose_name="pseudonym"
            ),
        ),
        migrations.AddField(
            model_name="user",
            name="hide_from_public_boards",
            field=models.BooleanField(default=False, verbose_name="hide me from site-wide leaderboards"),
        ),
    ]

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('lessons', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='playgroundrun',
            name='code',
            field=models.TextField(blank=True, help_text='the program (or graph program) as the visitor sent it'),
        ),
        migrations.AddField(
            model_name='playgroundrun',
            name='failure',
            field=models.CharField(blank=True, choices=[('unavailable', 'Unavailable'), ('late', 'Late'), ('internal', 'Internal')], max_length=12),
        ),
        migrations.AddField(
            model_name='playgroundrun',
            name='finished_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='playgroundrun',
            name='result',
            field=models.JSONField(blank=True, help_text='RunResult.to_dict(), or the compile flow', null=True),
        ),
        migrations.AddField(
            model_name='playgroundrun',
            name='started_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        # Runs made before this migration ran synchronously and are finished: they start DONE,
        # so nothing treats them as waiting; new runs start QUEUED.
        migrations.AddField(
            model_name='playgroundrun',
            name='state',
            field=models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('done', 'Done'), ('failed', 'Could not run')], db_index=True, default='done', max_length=10),
        ),
        migrations.AlterField(
            model_name='playgroundrun',
            name='state',
            field=models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('done', 'Done'), ('failed', 'Could not run')], db_index=True, default='queued', max_length=10),
        ),
        migrations.AlterField(
            model_name='playgroundrun',
            name='status',
            field=models.CharField(blank=True, help_text="the sandbox's status, for operators", max_length=20),
        ),
    ]

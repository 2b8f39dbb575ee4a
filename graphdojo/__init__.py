"""GraphDojo's command-line client: submit code through the REST API and read the verdict."""

"""Static files for production: hashed names and compression, without source maps."""
from whitenoise.storage import CompressedManifestStaticFilesStorage  # type: ignore[import-untyped]


def _without_source_maps(patterns: tuple) -> tuple:
    def keeps(pattern: str | tuple[str, str]) -> bool:
        return "sourceMappingURL" not in (pattern if isinstance(pattern, str) else pattern[0])

    return tuple((glob, tuple(p for p in rules if keeps(p))) for glob, rules in patterns)


class StaticFilesStorage(CompressedManifestStaticFilesStorage):
    """Vendored minified files name source maps that we do not ship; collectstatic leaves
    those comments alone instead of failing on the missing maps (docker-compose's build)."""

    patterns = _without_source_maps(CompressedManifestStaticFilesStorage.patterns)

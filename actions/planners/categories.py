"""The extension -> category map that ``organize`` (by type) and ``duplicates`` use.

Matching is on the last extension only, case-insensitively (``Foto.JPG`` is an image,
``x.tar.gz`` an archive). A name without an extension, or with one not listed here, is
``other``. The category names are the catalog's keys of the subfolder names ``organize``
creates (``policies.i18n.folder_name``: ``images`` is ``imágenes`` in Spanish).
"""

from __future__ import annotations

CATEGORIES: tuple[str, ...] = (
    "images",
    "documents",
    "spreadsheets",
    "presentations",
    "audio",
    "video",
    "archives",
    "code",
    "data",
    "other",
)

# category -> its extensions, space-separated (easy to read and extend)
_EXTENSIONS: dict[str, str] = {
    "images": (
        "jpg jpeg jpe png gif bmp tif tiff webp heic heif avif svg ico psd xcf "
        "raw cr2 cr3 nef arw dng orf rw2"
    ),
    "documents": "pdf doc docx odt rtf txt md markdown tex epub mobi pages djvu",
    "spreadsheets": "xls xlsx xlsm ods numbers",
    "presentations": "ppt pptx pps ppsx odp key",
    "audio": "mp3 wav flac ogg oga opus m4a aac wma aif aiff mid midi",
    "video": "mp4 m4v mkv avi mov webm wmv flv mpg mpeg 3gp ogv",
    "archives": "zip tar gz tgz bz2 tbz2 xz txz zst 7z rar iso dmg deb rpm",
    "code": (
        "py ipynb js mjs ts tsx jsx java kt scala c h cc cpp hpp rs go rb php pl lua r "
        "swift cs sh bash zsh fish ps1 bat html htm css scss"
    ),
    "data": "csv tsv json jsonl ndjson xml yaml yml toml ini sql sqlite db parquet",
}

EXTENSION_CATEGORY: dict[str, str] = {
    ext: category for category, exts in _EXTENSIONS.items() for ext in exts.split()
}


def extension(name: str) -> str:
    """The last extension, lowercased, without the dot ("" for none; a leading dot is not one)."""
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem or not ext:
        return ""
    return ext.lower()


def category_of(name: str) -> str:
    return EXTENSION_CATEGORY.get(extension(name), "other")

#!/usr/bin/env python3
"""Writes the contact sheet of examples/photos.yaml: each listed photo, original and sepia side by side,
or "Failed to load" where its download failed.

    python3 contact-sheet.py LIST FOLDER
"""
import html
import json
import os
import sys


def main():
    listing, folder = sys.argv[1], sys.argv[2]
    with open(listing) as file:
        photos = json.load(file)
    cells = []
    loaded = 0
    for photo in photos:
        name = photo["name"]
        title = html.escape(photo.get("title", name))
        original, sepia = name + ".png", name + "-sepia.png"
        if os.path.exists(os.path.join(folder, original)):
            loaded += 1
            pictures = f'<img src="{original}" alt="{title}"><img src="{sepia}" alt="{title}, sepia">'
        else:
            pictures = '<div class="failed">Failed to load</div>'
        cells.append(f"<figure>{pictures}<figcaption>{title}</figcaption></figure>")
    page = f"""<!doctype html>
<meta charset="utf-8">
<title>Classic photos</title>
<style>
body {{ font-family: sans-serif; background: #222; color: #eee; }}
figure {{ display: inline-block; margin: 12px; }}
img {{ width: 240px; margin-right: 4px; }}
.failed {{ width: 484px; height: 160px; line-height: 160px; text-align: center; background: #533; }}
</style>
<h1>Classic photos: {loaded} of {len(photos)} loaded</h1>
{"".join(cells)}
"""
    path = os.path.join(folder, "index.html")
    with open(path + ".tmp", "w") as file:
        file.write(page)
    os.replace(path + ".tmp", path)
    print(f"{path}: {loaded} of {len(photos)} photos")


if __name__ == "__main__":
    main()

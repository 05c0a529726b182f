"""Early noise experiment: random squares on a white canvas."""
import random
import sys
import time

from PIL import Image, ImageDraw

random.seed(time.time())
image = Image.new("RGB", (400, 400), "white")
draw = ImageDraw.Draw(image)
for _ in range(200):
    x, y = random.randrange(400), random.randrange(400)
    draw.rectangle([x, y, x + 12, y + 12], fill=(random.randrange(256), 40, 90))
image.save(sys.argv[-1] if len(sys.argv) > 1 else "draft.png")

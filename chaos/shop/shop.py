#!/usr/bin/env python3
"""shop.py — the shop single-table dataset of SEEDS.md section 1, generated
deterministically from a seed, and a loader for any DynamoDB endpoint.

    python3 chaos/shop/shop.py --stats [--seed 1]
    python3 chaos/shop/shop.py --endpoint http://127.0.0.1:8000 --table shop \
        --seed 1 [--create] [--threads 8]

The "small" shop of the source measurements: 76,617 items (products, stock,
reviews, customers, orders, order lines) in one table keyed PK/SK, with the
overloaded GSI1 and the pick-up queue GSI2 filled in as plain attributes.
A full Scan of it is 16 pages (each ends after the item that reaches
1 MiB) and costs 3953 read units consistent, 1976.5 eventually consistent; 22,030 orders, 3,695 of them with
a promo_code, 502 with promo_code = NY20 (all placed in December). How the
sizes were chosen, and why the total is 16.13 MB rather than 3953 x 4096
bytes, is in README.md beside this file.

As a library (the tests use it, no cluster needed):

    import shop
    items = shop.generate(seed=1)      # list of items in DynamoDB JSON
    shop.stats(items)                  # counts, sizes, scan pages, units

Only the standard library is needed to generate; boto3 (python3-boto3) to
load. The scan order is the cluster's (core/keyenc.c: XXH3-64 of the key
type tag and the partition key bytes); python3-xxhash is used when present
and a pure-Python XXH3-64 otherwise (the two agree; see xxh3_64).
"""

import argparse
import calendar
import functools
import hashlib
import json
import math
import os
import random
import sys
import threading
import time
import unicodedata

# ---------------------------------------------------------------------------
# The targets (SEEDS.md section 1) and the counts chosen to meet them.

TOTAL_ITEMS = 76617
N_PRODUCTS = 1500          # PROD#1001 .. PROD#2500 (PROD#2410 exists)
N_CUSTOMERS = 5000         # CUST#10001 .. CUST#15000
N_REVIEWS = 6000
N_ORDERS = 22030           # ORDER#1000001 .. ORDER#1022030
# Order lines per order: a typical order is META + 2 lines (3 items).
LINES_PER_ORDER = {1: 5573, 2: 14657, 3: 1500, 4: 300}
N_LINES = sum(k * v for k, v in LINES_PER_ORDER.items())   # 40,587
assert sum(LINES_PER_ORDER.values()) == N_ORDERS
assert 2 * N_PRODUCTS + N_CUSTOMERS + N_REVIEWS + N_ORDERS + N_LINES == \
    TOTAL_ITEMS

# Promotions: 3,695 orders carry promo_code; NY20 only in late December.
PROMOS = [  # code, orders, discount %, window (inclusive, "MM-DD")
    ("NY20", 502, 20, ("12-15", "12-31")),
    ("BF25", 493, 25, ("11-25", "12-02")),
    ("SPRING15", 640, 15, ("03-20", "05-31")),
    ("SUMMER10", 710, 10, ("06-21", "08-31")),
    ("WELCOME10", 1050, 10, None),     # a customer's first order
    ("FREESHIP", 300, 0, None),        # shipping fee waived
]
N_PROMO = sum(p[1] for p in PROMOS)
assert N_PROMO == 3695

# Scan paging as DynamoDB does it: a page ends after the item that brings
# it to 1 MiB (item sizes by the rules below), and each page costs its own
# bytes rounded up to 4 KB: one unit consistent, half eventually consistent.
PAGE_LIMIT = 1 << 20
RCU_BYTES = 4096
SCAN_PAGES = 16
SCAN_UNITS = 3953                   # consistent; 1976.5 eventually
# The last page is aimed at the middle of its 4 KB unit (97.5 units), so
# that the page-wise sum stays 3953 when the boundaries move by up to 2 KB.
LAST_PAGE_TARGET = (SCAN_UNITS - (SCAN_PAGES - 1) * 257) * RCU_BYTES - \
    RCU_BYTES // 2

YEAR = 2024
NOW = "2025-01-01T00:00:00Z"       # the data set's "now" (order statuses)
N_SELLERS = 60
N_PICKUPS = 250


# ---------------------------------------------------------------------------
# DynamoDB's item size, as core/item.c computes it.

def number_size(text):
    """Bytes of an N value: 1, plus 1 per base-100 digit pair aligned on the
    decimal point from the first to the last pair holding a significant
    digit, plus 1 if negative; zero is 1 byte (core/item.c number_bytes)."""
    s = text.strip()
    neg = s.startswith("-")
    if s[:1] in "+-":
        s = s[1:]
    exp10 = 0
    if "e" in s or "E" in s:
        s, e = s.replace("E", "e").split("e")
        exp10 = int(e)
    if "." in s:
        ip, fp = s.split(".")
    else:
        ip, fp = s, ""
    digits = (ip + fp).lstrip("0")
    # value = 0.d1d2...dn x 10^exp: exp counts the integer digits left of
    # the point once leading zeros are gone.
    exp = len(ip.lstrip("0")) if ip.lstrip("0") else \
        -(len(fp) - len(fp.lstrip("0")))
    digits = digits.rstrip("0")
    if not digits:
        return 1
    exp += exp10
    hi = exp - 1
    lo = exp - len(digits)
    return 1 + (hi // 2 - lo // 2 + 1) + (1 if neg else 0)


_number_size_cached = functools.lru_cache(maxsize=65536)(number_size)


def value_size(v):
    (t, x), = v.items()
    if t == "S":
        return len(x.encode("utf-8"))
    if t == "N":
        return number_size(x)
    if t == "B":
        return len(x)
    if t in ("NULL", "BOOL"):
        return 1
    if t == "SS":
        return sum(len(m.encode("utf-8")) for m in x)
    if t == "NS":
        return sum(number_size(m) for m in x)
    if t == "BS":
        return sum(len(m) for m in x)
    if t == "L":
        return 3 + sum(1 + value_size(e) for e in x)
    if t == "M":
        return 3 + sum(1 + len(k.encode("utf-8")) + value_size(e)
                       for k, e in x.items())
    raise ValueError("unknown type %r" % t)


def item_size(item):
    """DynamoDB's size of an item: attribute names' UTF-8 bytes plus the
    values' sizes (core/item.c item_size)."""
    n = 0
    for k, v in item.items():
        n += len(k) if k.isascii() else len(k.encode("utf-8"))
        x = v.get("S")
        if x is not None:
            n += len(x) if x.isascii() else len(x.encode("utf-8"))
            continue
        x = v.get("N")
        if x is not None:
            n += _number_size_cached(x)
            continue
        n += value_size(v)
    return n


# ---------------------------------------------------------------------------
# The cluster's storage order: XXH3-64 (seed 0) of a type tag byte (S = 1)
# and the partition key's bytes, big-endian in the storage key, then the
# encoded partition key and sort key (core/keyenc.c). For strings without
# NUL bytes the encodings sort like the strings' bytes.

_M64 = (1 << 64) - 1
_SECRET = bytes.fromhex(
    "b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671f"
    "cb79e64eccc0e578825ad07dccff7221b8084674f743248ee03590e6813a264c"
    "3c2852bb91c300cb88d0658b1b532ea371644897a20df94e3819ef46a9deacd8"
    "a8fa763fe39c343ff9dcbbc7c70b4f1d8a51e04bcdb45931c89f7ec9d9787364"
    "eac5ac8334d3ebc3c581a0fffa1363eb170ddd51b7f0da49d316552629d4689e"
    "2b16be587d47a1fc8ff8b8d17ad031ce45cb3a8f95160428afd7fbcabb4b407e")
_P64_1, _P64_2 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F
_P64_3 = 0x165667B19E3779F9


def _r64(b, i):
    return int.from_bytes(b[i:i + 8], "little")


def _r32(b, i):
    return int.from_bytes(b[i:i + 4], "little")


def _fold(a, b):
    p = a * b
    return (p & _M64) ^ (p >> 64)


def _avalanche(h):
    h ^= h >> 37
    h = (h * 0x165667919E3779F9) & _M64
    return h ^ (h >> 32)


def _xxh64_avalanche(h):
    h ^= h >> 33
    h = (h * _P64_2) & _M64
    h ^= h >> 29
    h = (h * _P64_3) & _M64
    return h ^ (h >> 32)


def _rrmxmx(h, n):
    rotl = lambda x, r: ((x << r) | (x >> (64 - r))) & _M64  # noqa: E731
    h ^= rotl(h, 49) ^ rotl(h, 24)
    h = (h * 0x9FB21C651E98DF25) & _M64
    h ^= (h >> 35) + n
    h = (h * 0x9FB21C651E98DF25) & _M64
    return h ^ (h >> 28)


def _mix16(b, i, s):
    return _fold(_r64(b, i) ^ _r64(_SECRET, s), _r64(b, i + 8) ^
                 _r64(_SECRET, s + 8))


def _xxh3_64_py(b):
    """XXH3_64bits(b) with seed 0 for inputs up to 240 bytes (partition
    keys of this data set are 10 to 15 bytes with the tag)."""
    n = len(b)
    if n == 0:
        return _xxh64_avalanche(_r64(_SECRET, 56) ^ _r64(_SECRET, 64))
    if n <= 3:
        c = (b[0] << 16) | (b[n >> 1] << 24) | b[n - 1] | (n << 8)
        return _xxh64_avalanche(c ^ (_r32(_SECRET, 0) ^ _r32(_SECRET, 4)))
    if n <= 8:
        flip = _r64(_SECRET, 8) ^ _r64(_SECRET, 16)
        x = (_r32(b, n - 4) + (_r32(b, 0) << 32)) ^ flip
        return _rrmxmx(x, n)
    if n <= 16:
        lo = _r64(b, 0) ^ (_r64(_SECRET, 24) ^ _r64(_SECRET, 32))
        hi = _r64(b, n - 8) ^ (_r64(_SECRET, 40) ^ _r64(_SECRET, 48))
        swap = int.from_bytes(lo.to_bytes(8, "little"), "big")
        return _avalanche((n + swap + hi + _fold(lo, hi)) & _M64)
    if n <= 128:
        acc = (n * _P64_1) & _M64
        if n > 32:
            if n > 64:
                if n > 96:
                    acc += _mix16(b, 48, 96) + _mix16(b, n - 64, 112)
                acc += _mix16(b, 32, 64) + _mix16(b, n - 48, 80)
            acc += _mix16(b, 16, 32) + _mix16(b, n - 32, 48)
        acc += _mix16(b, 0, 0) + _mix16(b, n - 16, 16)
        return _avalanche(acc & _M64)
    if n <= 240:
        acc = (n * _P64_1) & _M64
        for i in range(8):
            acc += _mix16(b, 16 * i, 16 * i)
        acc = _avalanche(acc & _M64)
        for i in range(8, n // 16):
            acc += _mix16(b, 16 * i, 16 * (i - 8) + 3)
        acc += _mix16(b, n - 16, 136 - 17)
        return _avalanche(acc & _M64)
    raise ValueError("pure-Python XXH3 covers keys up to 239 bytes; "
                     "install python3-xxhash")


try:
    import xxhash as _xxhash
    xxh3_64 = _xxhash.xxh3_64_intdigest
    HASH_IMPL = "python3-xxhash"
except ImportError:  # the fallback gives the same hashes
    _xxhash = None
    xxh3_64 = _xxh3_64_py
    HASH_IMPL = "pure Python"


def partition_hash(pk):
    """keyenc_hash of an S partition key: XXH3-64 of b"\\x01" + UTF-8."""
    return xxh3_64(b"\x01" + pk.encode("utf-8"))


def storage_order(items):
    """The items in the order a full Scan of the cluster returns them:
    by partition-key hash, then partition key, then sort key."""
    hashes = {}
    keyed = []
    for it in items:
        pk = it["PK"]["S"]
        h = hashes.get(pk)
        if h is None:
            h = hashes[pk] = partition_hash(pk)
        keyed.append((h, pk.encode("utf-8"), it["SK"]["S"].encode("utf-8"),
                      it))
    keyed.sort(key=lambda k: k[:3])
    return [k[3] for k in keyed]


def scan_pages(sizes, limit=PAGE_LIMIT):
    """Page sizes in bytes of a full Scan over items of these sizes (in
    scan order): a page ends after the item that brings it to `limit`."""
    pages, cur = [], 0
    for s in sizes:
        cur += s
        if cur >= limit:
            pages.append(cur)
            cur = 0
    if cur or not pages:
        pages.append(cur)
    return pages


def scan_units(pages):
    """(consistent, eventually consistent) read units of those pages."""
    c = sum(-(-p // RCU_BYTES) for p in pages)
    return c, c / 2


# ---------------------------------------------------------------------------
# Vocabulary.

BRANDS = ["Nordvik", "Altamira", "Kestrel", "Lumen & Co", "Brightwell",
          "Oakhurst", "Veloce", "Tidewater", "Marlowe", "Pinecrest",
          "Solenne", "Arbor", "Quillon", "Halcyon", "Ironbark", "Zephyra",
          "Maison Fleury", "Björk & Lund", "Cordova", "Ridgeline"]
LINES = ["Classic", "Pro", "Mini", "Plus", "Eco", "Max", "Essential",
         "Signature", "Compact", "Deluxe", "Air", "Studio"]
COLOURS = ["Black", "White", "Slate Grey", "Navy", "Forest Green", "Sand",
           "Terracotta", "Ocean Blue", "Burgundy", "Ivory", "Charcoal"]
CATEGORIES = {
    # category: (nouns, price range EUR, feature phrases)
    "Kitchen": (["Chef's Knife", "Cast Iron Skillet", "Espresso Machine",
                 "Cutting Board", "Stand Mixer", "Electric Kettle",
                 "Toaster", "Blender", "Dutch Oven", "Knife Block Set"],
                (9, 420), ["dishwasher-safe parts", "a non-slip base",
                           "a stainless steel body", "an ergonomic handle",
                           "even heat distribution", "a two-year warranty"]),
    "Electronics": (["Wireless Earbuds", "Bluetooth Speaker",
                     "USB-C Charger", "Power Bank", "Smart Watch", "Webcam",
                     "Mechanical Keyboard", "Gaming Mouse", "Headphones",
                     "E-Reader"],
                    (12, 380), ["up to 30 hours of battery life",
                                "fast charging over USB-C",
                                "Bluetooth 5.3", "a water-resistant shell",
                                "noise cancellation",
                                "a companion app for iOS and Android"]),
    "Home": (["Throw Blanket", "Table Lamp", "Scented Candle", "Wall Clock",
              "Storage Basket", "Cushion Cover", "Bath Towel Set",
              "Linen Duvet Cover", "Floor Rug", "Picture Frame"],
             (8, 260), ["machine-washable fabric", "a dimmable warm light",
                        "hand-finished details", "OEKO-TEX certified cotton",
                        "a minimalist design", "recycled materials"]),
    "Sports": (["Yoga Mat", "Running Shoes", "Water Bottle",
                "Resistance Bands", "Cycling Gloves", "Tennis Racket",
                "Hiking Backpack", "Foam Roller", "Jump Rope",
                "Dumbbell Set"],
               (7, 240), ["a breathable mesh", "a lightweight frame",
                          "a non-slip surface", "reflective details",
                          "a carry strap", "BPA-free materials"]),
    "Garden": (["Pruning Shears", "Watering Can", "Garden Hose", "Plant Pot",
                "Bird Feeder", "Solar Lantern", "Raised Bed Kit",
                "Garden Kneeler", "Compost Bin", "Seed Starter Tray"],
               (6, 190), ["UV-resistant plastic", "rust-proof steel",
                          "a frost-proof finish", "a solar panel",
                          "drainage holes", "a comfortable grip"]),
    "Toys": (["Building Blocks", "1000-Piece Puzzle", "Plush Bear",
              "Board Game", "Remote Control Car", "Wooden Train Set",
              "Science Kit", "Doll House", "Kite", "Marble Run"],
             (6, 150), ["non-toxic paints", "rounded edges",
                        "rechargeable batteries", "a storage box",
                        "an illustrated guide", "FSC-certified wood"]),
    "Beauty": (["Face Cream", "Shampoo", "Hair Dryer", "Lip Balm Set",
                "Electric Toothbrush", "Body Lotion", "Perfume",
                "Beard Trimmer", "Sunscreen SPF 50", "Makeup Brush Set"],
               (4, 160), ["no parabens", "a travel-size bottle",
                          "dermatologically tested formulas",
                          "a vegan formula", "a refillable case",
                          "a light fragrance"]),
    "Office": (["A5 Notebook", "Fountain Pen", "Desk Organizer",
                "Ergonomic Chair", "Monitor Stand", "Desk Lamp",
                "Paper Shredder", "Whiteboard", "Filing Cabinet",
                "Laptop Sleeve"],
               (3, 450), ["acid-free paper", "adjustable height",
                          "a sturdy steel frame", "a soft-touch finish",
                          "easy assembly", "cable management"]),
}
DESC_OPEN = [
    "The {name} is part of {brand}'s {line} range.",
    "Meet the {name}, designed in-house by {brand}.",
    "{brand} built the {name} for everyday use.",
    "{category_l} favourite: the {name} from {brand}.",
]
DESC_FEAT = [
    "It comes with {f}.", "You also get {f}.", "Highlights include {f}.",
    "Customers appreciate {f}.", "It is made with {f}.",
    "Every unit ships with {f}.", "Expect {f} as standard.",
]
DESC_CLOSE = [
    "Available in {colour}.", "Ships within 24 hours from our warehouse.",
    "Free returns within 30 days.", "Pairs well with the rest of the "
    "{line} collection.", "Packaging is plastic-free and recyclable.",
    "Backed by {brand}'s customer service.",
]

REVIEW_TITLES = {
    5: ["Excellent", "Love it", "Perfect", "Highly recommended",
        "Best purchase this year", "Five stars", "Exactly as described"],
    4: ["Very good", "Great value", "Happy with it", "Solid product",
        "Nearly perfect", "Good quality"],
    3: ["Okay", "Decent", "Does the job", "Mixed feelings", "Average"],
    2: ["Disappointing", "Not great", "Could be better", "Meh"],
    1: ["Broke quickly", "Do not buy", "Very poor", "Returned it"],
}
REVIEW_SENT = {
    "pos": ["Works exactly as described.", "Arrived quickly and well "
            "packaged.", "The quality is much better than I expected.",
            "I use it every day now.", "Great value for the price.",
            "My partner loves it too.", "Setup took less than five minutes.",
            "Feels solid and well made.", "I would buy it again without "
            "hesitation.", "Already ordered a second one as a gift.",
            "The colour is just like in the photos.",
            "Customer service answered within an hour.",
            "I compared several brands before choosing this one.",
            "After three months of daily use it still looks new.",
            "The packaging was minimal and fully recyclable.",
            "Picked it up at my pick-up point the day after ordering.",
            "It replaced an older model that lasted ten years.",
            "Easy to clean, which matters a lot to me.",
            "The size is perfect for a small flat.",
            "My kids use it too and it has survived so far.",
            "Honestly one of the better purchases I have made online.",
            "The details show real attention to quality."],
    "mid": ["It does the job but nothing more.", "Delivery took a bit "
            "longer than announced.", "The instructions could be clearer.",
            "Good for the price, though not premium.", "Slightly smaller "
            "than I thought.", "Some parts feel a little flimsy.",
            "It is fine for occasional use.", "The finish is okay.",
            "The colour is a little darker than in the photos.",
            "It works, but the previous version felt sturdier.",
            "I expected a bit more for this price.",
            "Assembly took longer than the manual suggests.",
            "It is noisier than I would like.",
            "Not bad, not great either.",
            "My pick-up point kept it waiting for two days.",
            "The product is fine; the packaging was excessive."],
    "neg": ["It stopped working after two weeks.", "The box arrived "
            "damaged.", "Not worth the money.", "Quality control seems "
            "poor.", "It looks nothing like the pictures.", "I had to "
            "return it.", "Support never replied to my emails.",
            "Cheap materials, sadly.", "One part was missing from the box.",
            "The refund took almost a month.",
            "It scratched on the very first day.",
            "The description promised far more than it delivers.",
            "It smells of plastic even after a week.",
            "Two of the screws did not fit at all.",
            "I would not recommend it to anyone.",
            "The replacement had exactly the same defect."],
}
CLOSERS = {
    "pos": ["Recommended.", "Thank you!", "Five stars.", "Would buy again.",
            "Happy customer here.", "Fast delivery too.",
            "Worth every cent.", "Great seller.", "Love it.",
            "No complaints at all.", "Very satisfied."],
    "mid": ["It is okay.", "Three stars.", "Could be better.",
            "Fair enough.", "Use it with care.", "Just average.",
            "Might buy again.", "Mixed feelings."],
    "neg": ["Avoid this one.", "Not recommended.", "One star.",
            "Very disappointed.", "Never again.", "Waste of money.",
            "Look elsewhere.", "Sent it back."],
}
END_WORDS = {
    "pos": {3: "Wow", 4: "Nice", 5: "Great", 6: "Superb", 7: "Perfect",
            8: "Terrific", 9: "Excellent", 10: "Impeccable",
            11: "Exceptional", 12: "Breathtaking"},
    "mid": {3: "Meh", 4: "Okay", 5: "Basic", 6: "Decent", 7: "Average",
            8: "Passable", 9: "Tolerable", 10: "Acceptable",
            11: "Serviceable", 12: "Unremarkable"},
    "neg": {3: "Bad", 4: "Sigh", 5: "Avoid", 6: "Broken", 7: "Useless",
            8: "Returned", 9: "Overrated", 10: "Frustrated",
            11: "Unfortunate", 12: "Disappointed"},
}
assert all(len(w) == n for d in END_WORDS.values() for n, w in d.items())
assert all(min(len(c) for c in d) <= 13 for d in CLOSERS.values())

COUNTRIES = {
    # code: (weight, phone prefix, cities, streets, first, last, postcode)
    "FR": (30, "+33 6", ["Paris", "Lyon", "Marseille", "Toulouse", "Nantes",
                         "Lille", "Bordeaux", "Besançon", "Orléans"],
           ["rue de la République", "avenue Victor Hugo", "boulevard "
            "Voltaire", "rue des Lilas", "place de l'Église"],
           ["Camille", "Léa", "Hugo", "Chloé", "Lucas", "Zoé", "Théo",
            "Inès", "Louis", "Manon"],
           ["Martin", "Bernard", "Dubois", "Lefèvre", "Moreau", "Girard",
            "Fontaine", "Roux"], "{5}"),
    "DE": (22, "+49 151", ["Berlin", "München", "Hamburg", "Köln",
                           "Düsseldorf", "Leipzig", "Stuttgart"],
           ["Hauptstraße", "Bahnhofstraße", "Gartenweg", "Schillerstraße",
            "Lindenallee"],
           ["Jonas", "Lena", "Jürgen", "Sophie", "Felix", "Mia", "Lukas",
            "Hannah"],
           ["Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Becker",
            "Schäfer"], "{5}"),
    "ES": (14, "+34 6", ["Madrid", "Barcelona", "Valencia", "Sevilla",
                         "Málaga", "Zaragoza", "A Coruña"],
           ["Calle Mayor", "Avenida de la Constitución", "Calle del Sol",
            "Paseo de Gracia"],
           ["José", "María", "Lucía", "Álvaro", "Sofía", "Martín", "Paula"],
           ["García", "Fernández", "López", "Martínez", "Sánchez", "Pérez"],
           "{5}"),
    "IT": (12, "+39 3", ["Roma", "Milano", "Napoli", "Torino", "Bologna",
                         "Firenze", "Forlì"],
           ["Via Roma", "Via Garibaldi", "Corso Italia", "Via Dante",
            "Piazza Cavour"],
           ["Giulia", "Lorenzo", "Francesca", "Matteo", "Chiara", "Niccolò"],
           ["Rossi", "Russo", "Ferrari", "Esposito", "Bianchi", "Romano"],
           "{5}"),
    "BE": (8, "+32 4", ["Bruxelles", "Liège", "Gent", "Antwerpen", "Namur"],
           ["Rue Royale", "Meir", "Rue Neuve", "Veldstraat"],
           ["Noah", "Emma", "Arthur", "Louise", "Jules", "Elise"],
           ["Peeters", "Janssens", "Maes", "Dupont", "Lambert", "Dumont"],
           "{4}"),
    "NL": (8, "+31 6", ["Amsterdam", "Rotterdam", "Utrecht", "Den Haag",
                        "Eindhoven"],
           ["Kerkstraat", "Dorpsstraat", "Molenweg", "Prinsengracht"],
           ["Daan", "Sanne", "Sem", "Fleur", "Bram", "Anouk"],
           ["de Jong", "Jansen", "de Vries", "van Dijk", "Bakker", "Visser"],
           "{4} {AA}"),
    "PT": (6, "+351 9", ["Lisboa", "Porto", "Braga", "Coimbra", "Évora"],
           ["Rua Augusta", "Avenida da Liberdade", "Rua de Santa Catarina"],
           ["João", "Beatriz", "Tiago", "Inês", "Gonçalo", "Mariana"],
           ["Silva", "Santos", "Ferreira", "Pereira", "Gonçalves"],
           "{4}-{3}"),
}
EMAIL_DOMAINS = ["gmail.com", "outlook.com", "yahoo.com", "proton.me",
                 "orange.fr", "web.de", "icloud.com"]
TIERS = [("bronze", 60), ("silver", 28), ("gold", 10), ("platinum", 2)]
PAYMENTS = [("card", 62), ("paypal", 21), ("apple_pay", 9),
            ("bank_transfer", 5), ("gift_card", 3)]
MATERIALS = ["stainless steel", "aluminium", "oak", "beech wood",
             "recycled plastic", "cotton", "linen", "ceramic", "glass",
             "silicone", "leather", "bamboo", "polyester"]
WAREHOUSES = ["WH-LYON-1", "WH-LILLE-2", "WH-KOELN-1", "WH-MADRID-1"]


# ---------------------------------------------------------------------------
# Helpers.

def S(x):
    return {"S": x}


def N(x):
    return {"N": str(x)}


def iso(ts):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def _epoch_utc(text):
    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ"))


def money(cents):
    """A price as DynamoDB N text: 19.9 for 1990 cents, 20 for 2000."""
    s = "%d.%02d" % divmod(cents, 100)
    return s.rstrip("0").rstrip(".") if "." in s else s


def weighted(rng, pairs):
    total = sum(w for _, w in pairs)
    r = rng.random() * total
    for v, w in pairs:
        r -= w
        if r < 0:
            return v
    return pairs[-1][0]


def ascii_fold(s):
    return "".join(c for c in unicodedata.normalize("NFKD", s)
                   if not unicodedata.combining(c))


def sub_rng(seed, name):
    # String seeds are hashed with SHA-512: stable across Python versions.
    return random.Random("shop:%d:%s" % (seed, name))


def fit_text(rng, length, kind):
    """ASCII review text of exactly `length` characters (>= 20), tone
    `kind` ("pos", "mid", "neg"): sentences in random order without
    repeats, then short closing sentences, then one closing word or mark
    that takes up the last 0 to 14 characters."""
    sentences = rng.sample(REVIEW_SENT[kind], len(REVIEW_SENT[kind]))
    closers = CLOSERS[kind]
    out = []
    cur = -1
    for s in sentences:
        if cur + 1 + len(s) > length:
            break
        out.append(s)
        cur += 1 + len(s)
    gap = length - max(cur, 0)
    while gap >= 15:
        fit = [c for c in closers if len(c) + (1 if out else 0) <= gap]
        if not fit:
            break
        c = rng.choice(fit)
        gap -= len(c) + (1 if out else 0)
        out.append(c)
    text = " ".join(out)
    gap = length - len(text)
    if gap == 0:
        pass
    elif gap <= 2 and text.endswith("."):     # "x." -> "x!!" / "x!!!"
        text = text[:-1] + "!" * (gap + 1)
    elif gap <= 2:
        text += "!" * gap
    elif gap == 3:
        text += " :)" if kind != "neg" else " :("
    elif gap == 4:
        text += " :-)" if kind != "neg" else " :-("
    else:
        text += " " + END_WORDS[kind][gap - 2] + "."
    assert len(text) == length, (len(text), length, text)
    return text


# ---------------------------------------------------------------------------
# The generator.

def _year_days():
    """Day starts of YEAR and their order weights (seasonality)."""
    start = _epoch_utc("%d-01-01T00:00:00Z" % YEAR)
    end = _epoch_utc("%d-01-01T00:00:00Z" % (YEAR + 1))
    days, weights = [], []
    t = start
    while t < end:
        md = time.strftime("%m-%d", time.gmtime(t))
        w = 1.0
        if md >= "11-01":
            w = 1.3
        if "11-25" <= md <= "12-02":
            w = 2.0
        elif "12-03" <= md <= "12-22":
            w = 1.7
        wd = time.gmtime(t).tm_wday
        if wd >= 5:
            w *= 1.15
        days.append(t)
        weights.append(w)
        t += 86400
    return days, weights


HOUR_WEIGHTS = [1, 1, 1, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 7, 6, 6, 6, 7, 9, 11,
                12, 11, 8, 4]


def _in_window(placed, window):
    md = placed[5:10]
    return window[0] <= md <= window[1]


class _Built:
    """Everything except the review bodies, whose lengths are fitted last."""


def _build(seed):
    b = _Built()
    b.seed = seed

    # Products and their sellers, prices and popularity.
    rng = sub_rng(seed, "products")
    cats = sorted(CATEGORIES)
    products = []
    for i in range(N_PRODUCTS):
        pid = 1001 + i
        cat = cats[rng.randrange(len(cats))]
        nouns, (plo, phi), feats = CATEGORIES[cat]
        brand = rng.choice(BRANDS)
        line = rng.choice(LINES)
        noun = rng.choice(nouns)
        colour = rng.choice(COLOURS)
        name = "%s %s %s" % (brand, noun, line)
        if rng.random() < 0.6:
            name += " - " + colour
        # Log-uniform price, rounded to .99 / .49 / .00 endings.
        euros = math.exp(rng.uniform(math.log(plo), math.log(phi)))
        cents = int(euros) * 100 + rng.choice([99, 99, 49, 0, 90])
        seller = 1 + int(rng.random() ** 1.6 * N_SELLERS)
        fmt = dict(name=name, brand=brand, line=line, colour=colour,
                   category_l=("An " if cat[0] in "AEIOU" else "A ") +
                   cat.lower())
        parts = [rng.choice(DESC_OPEN).format(**fmt)]
        chosen = rng.sample(feats, rng.randint(3, 6))
        for f in chosen:
            parts.append(rng.choice(DESC_FEAT).format(f=f))
        for c in rng.sample(DESC_CLOSE, rng.randint(2, 4)):
            parts.append(c.format(**fmt))
        desc = " ".join(parts)
        highlights = []
        for f in chosen[:rng.randint(2, len(chosen))]:
            for art in ("a ", "an "):
                if f.startswith(art):
                    f = f[len(art):]
            highlights.append(f[0].upper() + f[1:])
        dims = sorted((rng.randrange(2, 80) for _ in range(3)),
                      reverse=True)
        tags = sorted(set([cat.lower(), noun.split()[-1].lower(),
                           line.lower()] +
                          rng.sample(["bestseller", "new", "eco", "gift",
                                      "sale", "premium", "limited"],
                                     rng.randint(0, 2))))
        created = _epoch_utc("2022-01-01T00:00:00Z") + \
            rng.randrange(2 * 365 * 86400)
        products.append(dict(
            pid=pid, cat=cat, brand=brand, name=name, cents=cents,
            seller=seller, desc=desc, tags=tags, created=created,
            weight=rng.randrange(50, 9000, 10), colour=colour,
            highlights=highlights, dims="%d x %d x %d" % tuple(dims),
            material=rng.choice(MATERIALS),
            images=rng.randint(1, 4)))
    popularity = list(range(N_PRODUCTS))
    rng.shuffle(popularity)          # popularity[rank] = product index
    prod_w = [0.0] * N_PRODUCTS
    for rank, idx in enumerate(popularity):
        prod_w[idx] = 1.0 / (rank + 8) ** 0.85
    prod_cum = []
    acc = 0.0
    for w in prod_w:
        acc += w
        prod_cum.append(acc)
    b.products = products

    # Stock.
    rng = sub_rng(seed, "stock")
    b.stock = []
    for p in products:
        q = 0 if rng.random() < 0.04 else int(rng.random() ** 2 * 600) + 1
        b.stock.append(dict(
            quantity=q, warehouse=rng.choice(WAREHOUSES),
            reorder=rng.choice([10, 20, 25, 50]),
            updated=_epoch_utc("2024-12-01T00:00:00Z") +
            rng.randrange(30 * 86400)))

    # Customers.
    rng = sub_rng(seed, "customers")
    ccodes = sorted(COUNTRIES)
    cweights = [(c, COUNTRIES[c][0]) for c in ccodes]
    b.customers = []
    for i in range(N_CUSTOMERS):
        cid = 10001 + i
        cc = weighted(rng, cweights)
        _, phone, cities, streets, firsts, lasts, pc = COUNTRIES[cc]
        first, last = rng.choice(firsts), rng.choice(lasts)
        local = ascii_fold("%s.%s" % (first, last)).lower().replace(" ", "")
        if rng.random() < 0.6:
            local += str(rng.randrange(1, 100))
        email = "%s@%s" % (local, rng.choice(EMAIL_DOMAINS))
        digits = "".join(str(rng.randrange(10)) for _ in range(8))
        postcode = pc.replace("{5}", "%05d" % rng.randrange(1000, 99999)) \
            .replace("{4}", "%04d" % rng.randrange(1000, 9999)) \
            .replace("{3}", "%03d" % rng.randrange(1000)) \
            .replace("{AA}", chr(65 + rng.randrange(26)) +
                     chr(65 + rng.randrange(26)))
        b.customers.append(dict(
            cid=cid, name="%s %s" % (first, last), email=email,
            phone="%s %s %s %s %s" % (phone, digits[:2], digits[2:4],
                                      digits[4:6], digits[6:]),
            address="%d %s" % (rng.randrange(1, 200), rng.choice(streets)),
            city=rng.choice(cities), postcode=postcode, country=cc,
            created=_epoch_utc("2020-01-01T00:00:00Z") +
            rng.randrange(4 * 365 * 86400),
            tier=weighted(rng, TIERS), optin=rng.random() < 0.45,
            pickup=(1 + rng.randrange(N_PICKUPS)) if rng.random() < 0.7
            else None,
            activity=rng.random() ** 2.2))   # skewed: few very active
    cust_cum = []
    acc = 0.0
    for c in b.customers:
        acc += 0.05 + c["activity"]
        cust_cum.append(acc)

    # Reviews (bodies come later).
    rng = sub_rng(seed, "reviews")
    r_start = _epoch_utc("2023-01-01T00:00:00Z")
    b.reviews = []
    for i in range(N_REVIEWS):
        pidx = _pick(rng, prod_cum)
        rating = weighted(rng, [(5, 45), (4, 28), (3, 12), (2, 7), (1, 8)])
        t = r_start + rng.randrange(2 * 365 * 86400)
        b.reviews.append(dict(
            rid="R%06d" % (i + 1), pidx=pidx, rating=rating, t=t,
            cust=10001 + _pick(rng, cust_cum),
            title=rng.choice(REVIEW_TITLES[rating]),
            verified=rng.random() < 0.85, votes=int(rng.random() ** 3 * 60),
            weight=min(3.5, 0.15 + rng.expovariate(1.0))))
    for p in products:
        p["ratings"] = []
    for r in b.reviews:
        products[r["pidx"]]["ratings"].append(r["rating"])

    # Orders: times, customers, lines, promotions, statuses.
    rng = sub_rng(seed, "orders")
    days, dweights = _year_days()
    dcum = []
    acc = 0.0
    for w in dweights:
        acc += w
        dcum.append(acc)
    hcum = []
    acc = 0
    for w in HOUR_WEIGHTS:
        acc += w
        hcum.append(acc)
    times = []
    for _ in range(N_ORDERS):
        d = days[_pick(rng, dcum)]
        h = _pick(rng, hcum)
        times.append(d + h * 3600 + rng.randrange(3600))
    times.sort()
    nlines = []
    for k in sorted(LINES_PER_ORDER):
        nlines += [k] * LINES_PER_ORDER[k]
    rng.shuffle(nlines)
    now = _epoch_utc(NOW)
    orders = []
    for i, t in enumerate(times):
        cust = b.customers[_pick(rng, cust_cum)]
        lines = []
        for _ in range(nlines[i]):
            pidx = _pick(rng, prod_cum)
            qty = weighted(rng, [(1, 80), (2, 14), (3, 4), (4, 1), (5, 1)])
            lines.append((pidx, qty))
        pickup = cust["pickup"] if cust["pickup"] and rng.random() < 0.9 \
            else None
        if pickup is None and rng.random() < 0.15:
            pickup = 1 + rng.randrange(N_PICKUPS)
        age = now - t
        if age < 86400:
            status = "placed" if rng.random() < 0.3 else "paid"
        elif age < 3 * 86400:
            status = "paid" if rng.random() < 0.2 else "shipped"
        elif age < 8 * 86400:
            status = "shipped" if rng.random() < 0.6 else "delivered"
        else:
            status = weighted(rng, [("delivered", 955), ("cancelled", 30),
                                    ("returned", 15)])
        orders.append(dict(
            oid=1000001 + i, t=t, placed=iso(t), cust=cust, lines=lines,
            pickup=pickup, status=status, promo=None,
            payment=weighted(rng, PAYMENTS)))
    # Promotions, in a fixed order, each from the orders still free.
    free = set(range(N_ORDERS))
    first_order = {}
    for i, o in enumerate(orders):
        first_order.setdefault(o["cust"]["cid"], i)
    for code, count, pct, window in PROMOS:
        if window is not None:
            cands = [i for i in sorted(free)
                     if _in_window(orders[i]["placed"], window)]
        elif code == "WELCOME10":
            cands = sorted(i for i in first_order.values() if i in free)
        else:
            cands = sorted(free)
        if len(cands) < count:
            raise RuntimeError("promo %s: %d candidates for %d orders"
                               % (code, len(cands), count))
        for i in rng.sample(cands, count):
            orders[i]["promo"] = (code, pct)
            free.discard(i)
    b.orders = orders
    return b


def _pick(rng, cum):
    """Index drawn with cumulative weights `cum` (bisect)."""
    x = rng.random() * cum[-1]
    lo, hi = 0, len(cum) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cum[mid] > x:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _items_fixed(b):
    """All items; review items get an empty body (filled in later).
    Returns (items, review_positions)."""
    items = []
    rev_pos = []
    reviews_by_product = {}
    for r in b.reviews:
        reviews_by_product.setdefault(r["pidx"], []).append(r)
    for idx, p in enumerate(b.products):
        pk = "PROD#%d" % p["pid"]
        it = {
            "PK": S(pk), "SK": S("META"), "entityType": S("product"),
            "name": S(p["name"]), "brand": S(p["brand"]),
            "category": S(p["cat"]), "price": N(money(p["cents"])),
            "currency": S("EUR"), "description": S(p["desc"]),
            "highlights": {"L": [S(h) for h in p["highlights"]]},
            "specs": {"M": {"colour": S(p["colour"]),
                            "weight_g": N(p["weight"]),
                            "dimensions_cm": S(p["dims"]),
                            "material": S(p["material"])}},
            "tags": {"SS": p["tags"]},
            "images": {"L": [S("https://img.shop.example/p/%d/%d.jpg"
                               % (p["pid"], k))
                             for k in range(1, p["images"] + 1)]},
            "seller_id": S("SELLER#%03d" % p["seller"]),
            "created_at": S(iso(p["created"])),
            "review_count": N(len(p["ratings"])),
            "GSI1PK": S("SELLER#%03d" % p["seller"]),
            "GSI1SK": S(pk),
        }
        if p["ratings"]:
            it["rating"] = N(money(round(
                100 * sum(p["ratings"]) / len(p["ratings"]), -1)))
        items.append(it)
        st = b.stock[idx]
        items.append({
            "PK": S(pk), "SK": S("STOCK"), "entityType": S("stock"),
            "quantity": N(st["quantity"]), "warehouse": S(st["warehouse"]),
            "reorder_level": N(st["reorder"]),
            "updated_at": S(iso(st["updated"])),
        })
        for r in reviews_by_product.get(idx, []):
            t = iso(r["t"])
            rev_pos.append(len(items))
            items.append({
                "PK": S(pk), "SK": S("REVIEW#%s#%s" % (t, r["rid"])),
                "entityType": S("review"),
                "customer_id": S("CUST#%d" % r["cust"]),
                "rating": N(r["rating"]), "title": S(r["title"]),
                "body": S(""), "verified_purchase": {"BOOL": r["verified"]},
                "helpful_votes": N(r["votes"]), "created_at": S(t),
            })
    for c in b.customers:
        items.append({
            "PK": S("CUST#%d" % c["cid"]), "SK": S("META"),
            "entityType": S("customer"), "name": S(c["name"]),
            "email": S(c["email"]), "phone": S(c["phone"]),
            "address": S(c["address"]), "postcode": S(c["postcode"]),
            "city": S(c["city"]), "country": S(c["country"]),
            "loyalty_tier": S(c["tier"]),
            "marketing_opt_in": {"BOOL": c["optin"]},
            "created_at": S(iso(c["created"])),
        })
    for o in b.orders:
        pk = "ORDER#%d" % o["oid"]
        sub = 0
        for n, (pidx, qty) in enumerate(o["lines"], 1):
            p = b.products[pidx]
            sub += p["cents"] * qty
            items.append({
                "PK": S(pk), "SK": S("ITEM#%02d" % n),
                "entityType": S("order_item"),
                "product_id": S("PROD#%d" % p["pid"]),
                "product_name": S(p["name"]), "quantity": N(qty),
                "unit_price": N(money(p["cents"])),
            })
        fee = 0 if sub >= 5000 else (299 if o["pickup"] else 499)
        disc = 0
        if o["promo"]:
            code, pct = o["promo"]
            disc = fee if code == "FREESHIP" else (sub * pct + 50) // 100
        cust = "CUST#%d" % o["cust"]["cid"]
        it = {
            "PK": S(pk), "SK": S("META"), "entityType": S("order"),
            "customer_id": S(cust), "placed_at": S(o["placed"]),
            "status": S(o["status"]), "payment_method": S(o["payment"]),
            "item_count": N(sum(q for _, q in o["lines"])),
            "shipping_cost": N(money(fee)),
            "total": N(money(sub + fee - disc)), "currency": S("EUR"),
            "GSI1PK": S(cust), "GSI1SK": S("ORDER#" + o["placed"]),
        }
        if o["pickup"]:
            it["GSI2PK"] = S("PICKUP#%04d" % o["pickup"])
            it["GSI2SK"] = S("%s#%s" % (o["status"], o["placed"]))
        else:
            c = o["cust"]
            it["ship_to"] = S("%s, %s %s" % (c["address"], c["postcode"],
                                             c["city"]))
        if o["promo"]:
            it["promo_code"] = S(o["promo"][0])
            it["discount"] = N(money(disc))
        items.append(it)
    return items, rev_pos


def _fit_lengths(weights, total, minimum=20):
    """Integer lengths >= minimum, proportional to weights, summing to
    total exactly (largest remainders, ties by position)."""
    n = len(weights)
    spare = total - minimum * n
    if spare < 0:
        raise ValueError("review bodies cannot be that short")
    ws = sum(weights)
    raw = [spare * w / ws for w in weights]
    base = [int(x) for x in raw]
    rest = spare - sum(base)
    order = sorted(range(n), key=lambda i: (base[i] - raw[i], i))
    for i in order[:rest]:
        base[i] += 1
    return [minimum + x for x in base]


def generate(seed=1, _trace=None):
    """The whole data set for `seed`: a list of items in DynamoDB JSON,
    products (each followed by its stock and reviews), customers, orders
    (each preceded by its lines). Same seed, same items, byte for byte.

    Review bodies are sized last so that a full Scan in the cluster's
    storage order gives 16 pages and 3953 consistent read units, with the
    last page in the middle of its 4 KB unit."""
    b = _build(seed)
    items, rev_pos = _items_fixed(b)
    sizes = [item_size(it) for it in items]        # bodies empty
    fixed = sum(sizes)
    ordered = storage_order(items)
    pos_in_items = {id(it): k for k, it in enumerate(items)}
    scan_idx = [pos_in_items[id(it)] for it in ordered]
    # Reviews appear in items grouped by product; map to b.reviews order.
    rev_of_pos = []
    by_product = {}
    for r in b.reviews:
        by_product.setdefault(r["pidx"], []).append(r)
    for idx in range(len(b.products)):
        rev_of_pos.extend(by_product.get(idx, []))
    weights = [r["weight"] for r in rev_of_pos]
    rev_rngs_seed = ["shop:%d:review-text:%s" % (seed, r["rid"])
                     for r in rev_of_pos]
    kinds = ["pos" if r["rating"] >= 4 else "mid" if r["rating"] == 3
             else "neg" for r in rev_of_pos]

    # The 15 full pages overshoot 1 MiB by part of their last item; 1500
    # bytes in all is typical. Aim, measure in storage order, correct.
    total = (SCAN_PAGES - 1) * PAGE_LIMIT + LAST_PAGE_TARGET + 1500
    best = None
    for attempt in range(60):
        lengths = _fit_lengths(weights, total - fixed)
        cur = list(sizes)
        for k, pos in enumerate(rev_pos):
            cur[pos] = sizes[pos] + lengths[k]
        pages = scan_pages(cur[i] for i in scan_idx)
        units = scan_units(pages)[0]
        good = len(pages) == SCAN_PAGES and units == SCAN_UNITS
        err = pages[-1] - LAST_PAGE_TARGET if len(pages) == SCAN_PAGES \
            else (len(pages) - SCAN_PAGES) * PAGE_LIMIT
        if _trace is not None:
            _trace.append((total, len(pages), pages[-1], units))
        rank = (not good, abs(err))
        if best is None or rank < best[0]:
            best = (rank, total, lengths)
        if good and abs(err) <= RCU_BYTES // 4:
            break
        if abs(err) > RCU_BYTES // 4:
            total -= err
        else:
            # A full page that ends exactly on 1 MiB costs 256 units, not
            # 257: move every boundary a little.
            total += 211
    (missed, _), total, lengths = best
    if missed:
        raise RuntimeError("seed %d: no review sizing gives %d pages and %d "
                           "units" % (seed, SCAN_PAGES, SCAN_UNITS))
    for k, pos in enumerate(rev_pos):
        items[pos]["body"] = S(fit_text(random.Random(rev_rngs_seed[k]),
                                        lengths[k], kinds[k]))
    return items


# ---------------------------------------------------------------------------
# Statistics.

def digest(items):
    """SHA-256 of the items as canonical JSON lines (determinism check)."""
    h = hashlib.sha256()
    for it in items:
        h.update(json.dumps(it, sort_keys=True, ensure_ascii=False,
                            separators=(",", ":")).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def stats(items):
    by_type = {}
    size_by_type = {}
    total = 0
    for it in items:
        t = it["entityType"]["S"]
        s = item_size(it)
        by_type[t] = by_type.get(t, 0) + 1
        size_by_type[t] = size_by_type.get(t, 0) + s
        total += s
    orders = [it for it in items if it["entityType"]["S"] == "order"]
    promo = [o for o in orders if "promo_code" in o]
    ny20 = [o for o in orders if o.get("promo_code") == {"S": "NY20"}]
    ordered = storage_order(items)
    pages = scan_pages(item_size(it) for it in ordered)
    cu, eu = scan_units(pages)
    return {
        "items": len(items),
        "by_type": by_type,
        "bytes": total,
        "bytes_by_type": size_by_type,
        "avg_bytes": {t: size_by_type[t] / by_type[t] for t in by_type},
        "max_bytes": max(item_size(it) for it in items),
        "orders": len(orders),
        "orders_with_promo": len(promo),
        "orders_ny20": len(ny20),
        "orders_ny20_december": sum(
            1 for o in ny20 if o["placed_at"]["S"][5:7] == "12"),
        "scan_pages": pages,
        "scan_rcu_consistent": cu,
        "scan_rcu_eventual": eu,
        "hash": HASH_IMPL,
        "digest": digest(items),
    }


def print_stats(st, out=sys.stdout):
    w = out.write
    w("items            %8d\n" % st["items"])
    for t in ("product", "stock", "review", "customer", "order",
              "order_item"):
        w("  %-14s %8d  %10d bytes  avg %6.1f\n" % (
            t, st["by_type"].get(t, 0), st["bytes_by_type"].get(t, 0),
            st["avg_bytes"].get(t, 0)))
    w("total size       %8d bytes = %.4f MB (10^6) = %.4f MiB\n" % (
        st["bytes"], st["bytes"] / 1e6, st["bytes"] / 2 ** 20))
    w("largest item     %8d bytes\n" % st["max_bytes"])
    w("orders %d, with promo_code %d, NY20 %d (in December %d)\n" % (
        st["orders"], st["orders_with_promo"], st["orders_ny20"],
        st["orders_ny20_december"]))
    w("full Scan (storage order, %s hash): %d pages, last %d bytes, "
      "%d RCU consistent, %s eventually consistent\n" % (
          st["hash"], len(st["scan_pages"]), st["scan_pages"][-1],
          st["scan_rcu_consistent"], st["scan_rcu_eventual"]))
    w("digest           %s\n" % st["digest"])


# ---------------------------------------------------------------------------
# Loading.

THROTTLED = ("ProvisionedThroughputExceededException", "ThrottlingException",
             "RequestLimitExceeded", "InternalServerError",
             "ServiceUnavailable")


def _client(endpoint, region):
    import boto3
    from botocore.config import Config
    return boto3.client(
        "dynamodb", endpoint_url=endpoint, region_name=region,
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "shop"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY",
                                             "shop"),
        config=Config(retries={"mode": "standard", "max_attempts": 3},
                      connect_timeout=5, read_timeout=30,
                      max_pool_connections=4))


def gsi(name, pk, sk):
    return {"IndexName": name,
            "KeySchema": [{"AttributeName": pk, "KeyType": "HASH"},
                          {"AttributeName": sk, "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}


def create_table(client, table, timeout=60.0):
    """PK/SK strings, on demand, with the overloaded GSI1 (customers'
    orders, sellers' products) and GSI2 (the pick-up point queue), both
    projecting ALL. The promo-code index is left out: the seed adds it
    to the loaded table (UpdateTable, backfill)."""
    from botocore.exceptions import ClientError
    try:
        client.create_table(
            TableName=table, BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[
                {"AttributeName": a, "AttributeType": "S"}
                for a in ("PK", "SK", "GSI1PK", "GSI1SK", "GSI2PK",
                          "GSI2SK")],
            KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"},
                       {"AttributeName": "SK", "KeyType": "RANGE"}],
            GlobalSecondaryIndexes=[gsi("GSI1", "GSI1PK", "GSI1SK"),
                                    gsi("GSI2", "GSI2PK", "GSI2SK")])
    except ClientError as e:
        if e.response["Error"]["Code"] != "ResourceInUseException":
            raise
        sys.stderr.write("shop: table %s exists, loading into it\n" % table)
    deadline = time.monotonic() + timeout
    while True:
        d = client.describe_table(TableName=table)["Table"]
        if d["TableStatus"] == "ACTIVE" and all(
                g["IndexStatus"] == "ACTIVE"
                for g in d.get("GlobalSecondaryIndexes", [])):
            return d
        if time.monotonic() > deadline:
            raise RuntimeError("table %s still %s after %.0f s"
                               % (table, d["TableStatus"], timeout))
        time.sleep(0.2)


class Progress:
    """A progress bar on stderr: redrawn in place on a terminal, a line
    every 10 % otherwise."""

    def __init__(self, total, out=sys.stderr):
        self.total, self.out = total, out
        self.done = 0
        self.retries = 0
        self.lock = threading.Lock()
        self.t0 = time.monotonic()
        self.tty = out.isatty()
        self.last_draw = 0.0
        self.last_decile = -1

    def add(self, n=0, retries=0):
        with self.lock:
            self.done += n
            self.retries += retries
            self._draw(False)

    def _draw(self, final):
        now = time.monotonic()
        el = max(now - self.t0, 1e-9)
        frac = self.done / self.total if self.total else 1.0
        rate = self.done / el
        eta = (self.total - self.done) / rate if rate > 0 else 0
        line = "[%-30s] %6d/%d %5.1f%% %7.0f items/s %d retried ETA %3.0fs" % (
            "#" * int(frac * 30), self.done, self.total, 100 * frac, rate,
            self.retries, eta)
        if self.tty:
            if final or now - self.last_draw >= 0.1:
                self.out.write("\r" + line)
                self.last_draw = now
        else:
            dec = int(frac * 10)
            if dec > self.last_decile:
                self.out.write(line + "\n")
                self.last_decile = dec
        self.out.flush()

    def finish(self):
        with self.lock:
            self._draw(True)
            if self.tty:
                self.out.write("\n")
            self.out.flush()


def _backoff(attempt, base=0.05, cap=5.0, rng=random.Random()):
    time.sleep(min(cap, base * 2 ** attempt) * (0.5 + rng.random() / 2))


def load(endpoint, table, items, threads=8, region="us-east-1",
         progress=True, use_put=False, max_attempts=30):
    """Writes the items with BatchWriteItem, 25 per call, in `threads`
    threads; UnprocessedItems and throttled calls are retried with
    exponential backoff. If the endpoint does not know BatchWriteItem
    (UnknownOperationException) it falls back to PutItem, item by item.
    Returns a summary dict."""
    from botocore.exceptions import ClientError
    batches = [items[i:i + 25] for i in range(0, len(items), 25)]
    nxt = [0]
    lock = threading.Lock()
    mode = {"put": use_put}
    errors = []
    prog = Progress(len(items)) if progress else None
    calls = [0]

    def take():
        with lock:
            if nxt[0] >= len(batches) or errors:
                return None
            b = batches[nxt[0]]
            nxt[0] += 1
            return b

    def put_each(client, batch):
        for it in batch:
            for attempt in range(max_attempts):
                try:
                    client.put_item(TableName=table, Item=it)
                    break
                except ClientError as e:
                    if e.response["Error"]["Code"] not in THROTTLED:
                        raise
                    if prog:
                        prog.add(retries=1)
                    _backoff(attempt)
            else:
                raise RuntimeError("PutItem still throttled after %d tries"
                                   % max_attempts)
            if prog:
                prog.add(1)

    def batch_write(client, batch):
        reqs = [{"PutRequest": {"Item": it}} for it in batch]
        attempt = 0
        while reqs:
            try:
                r = client.batch_write_item(RequestItems={table: reqs})
                with lock:
                    calls[0] += 1
            except ClientError as e:
                code = e.response["Error"]["Code"]
                if code == "UnknownOperationException":
                    raise
                if code not in THROTTLED:
                    raise
                r = None
            if r is not None:
                left = r.get("UnprocessedItems", {}).get(table, [])
                if prog:
                    prog.add(len(reqs) - len(left))
                if not left:
                    return
                reqs = left
            if prog:
                prog.add(retries=1)
            if attempt >= max_attempts:
                raise RuntimeError("%d items still unprocessed after %d "
                                   "tries" % (len(reqs), attempt))
            _backoff(attempt)
            attempt += 1

    def worker():
        from botocore.exceptions import ClientError as CE
        client = _client(endpoint, region)
        try:
            while True:
                batch = take()
                if batch is None:
                    return
                if mode["put"]:
                    put_each(client, batch)
                    continue
                try:
                    batch_write(client, batch)
                except CE as e:
                    if e.response["Error"]["Code"] != \
                            "UnknownOperationException":
                        raise
                    with lock:
                        if not mode["put"]:
                            mode["put"] = True
                            sys.stderr.write(
                                "\nshop: the endpoint has no BatchWriteItem;"
                                " falling back to PutItem\n")
                    put_each(client, batch)
        except BaseException as e:  # stop the others, report once
            with lock:
                errors.append(e)

    t0 = time.monotonic()
    ws = [threading.Thread(target=worker, daemon=True)
          for _ in range(max(1, threads))]
    for w in ws:
        w.start()
    for w in ws:
        w.join()
    if prog:
        prog.finish()
    if errors:
        raise errors[0]
    return {"items": len(items), "seconds": time.monotonic() - t0,
            "batch_calls": calls[0],
            "mode": "PutItem" if mode["put"] else "BatchWriteItem"}


# ---------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Generate the shop single-table data set (SEEDS.md "
        "section 1) and load it into a DynamoDB-compatible endpoint.")
    ap.add_argument("--endpoint", default="http://127.0.0.1:8000")
    ap.add_argument("--table", default="shop")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--create", action="store_true",
                    help="create the table first (PK/SK, PAY_PER_REQUEST)")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--region", default=os.environ.get(
        "AWS_DEFAULT_REGION", "us-east-1"))
    ap.add_argument("--stats", action="store_true",
                    help="print counts and sizes; load nothing")
    ap.add_argument("--put", action="store_true",
                    help="write with PutItem instead of BatchWriteItem")
    ap.add_argument("--jsonl", metavar="FILE",
                    help="also write the items as JSON lines to FILE")
    args = ap.parse_args(argv)

    t0 = time.monotonic()
    items = generate(args.seed)
    gen = time.monotonic() - t0
    if args.jsonl:
        with open(args.jsonl, "w", encoding="utf-8") as f:
            for it in items:
                f.write(json.dumps(it, ensure_ascii=False,
                                   separators=(",", ":")) + "\n")
    if args.stats:
        print_stats(stats(items))
        sys.stdout.write("generated in %.2f s (seed %d)\n" % (gen, args.seed))
        return 0
    sys.stderr.write("shop: %d items generated in %.2f s (seed %d)\n"
                     % (len(items), gen, args.seed))
    if args.create:
        create_table(_client(args.endpoint, args.region), args.table)
    r = load(args.endpoint, args.table, items, threads=args.threads,
             region=args.region, use_put=args.put)
    sys.stderr.write("shop: %d items written to %s with %s in %.1f s "
                     "(%.0f items/s)\n" % (
                         r["items"], args.table, r["mode"], r["seconds"],
                         r["items"] / max(r["seconds"], 1e-9)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

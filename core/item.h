/*
 * item.h — DynamoDB's rules for the size of items and attributes, and the
 * item-level limits (400 KB items, key sizes).
 *
 * Sizes follow "Item sizes and formats" in the DynamoDB developer guide:
 * names count their UTF-8 bytes, strings their UTF-8 bytes, binaries their
 * raw bytes, numbers one byte per pair of digits (pairs aligned on the
 * decimal point, see item.c) plus one, plus one if negative, NULL and BOOL
 * one byte, lists and maps 3 bytes plus one byte per element plus the
 * elements, sets the sum of their members. These sizes drive the 400 KB
 * limit and capacity units.
 */
#ifndef KV_ITEM_H
#define KV_ITEM_H

#include <stddef.h>

#include "value.h"

#define ITEM_MAX_SIZE (400 * 1024)
#define ITEM_MAX_HASH_KEY 2048
#define ITEM_MAX_RANGE_KEY 1024

/* item_value_size returns the size of a value alone, without a name. */
size_t item_value_size(const value *v);

/*
 * item_size returns the size of an item (type M): for each attribute the
 * length of its name plus the size of its value.
 */
size_t item_size(const value *item);

#endif

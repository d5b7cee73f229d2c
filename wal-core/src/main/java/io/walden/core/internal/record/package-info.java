/**
 * The record layout, its CRC-32C and validation. Internal to Walden: public only so that sibling
 * packages can reach it; not an API. The layout is specified in {@code docs/format.md}.
 */
package io.walden.core.internal.record;

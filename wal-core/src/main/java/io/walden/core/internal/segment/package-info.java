/**
 * Segment files: naming, the header layout, preallocation, mapping with Chronicle Bytes, recycling.
 * Internal to Walden: public only so that sibling packages can reach it; not an API, may change.
 * The file layout is specified in {@code docs/format.md}.
 */
package io.walden.core.internal.segment;

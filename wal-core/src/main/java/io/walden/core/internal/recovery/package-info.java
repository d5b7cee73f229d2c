/**
 * Opening a log: the control file, the end-of-log scan, torn-tail repair and corruption reports.
 * Internal to Walden: public only so that sibling packages can reach it; not an API. Formats are
 * specified in {@code docs/format.md}.
 */
package io.walden.core.internal.recovery;

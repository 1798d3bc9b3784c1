#ifndef CR_UTF8_H
#define CR_UTF8_H
/* UTF-8 validity and the Windows-1252 fallback of the text builders.
 *
 * Text that crescent writes is UTF-8, because the tools that read it back
 * expect it (gensim, a word2vec baseline, stops on anything else). GCIDE carries a few raw Windows-1252 bytes ("market\x92s",
 * "fa\xe7ade"); cr_utf8_from_cp1252 turns such bytes into their characters
 * and leaves valid UTF-8 as it is, so a dictionary that is already UTF-8
 * (or mixed) comes through unchanged. Valid means RFC 3629: shortest form,
 * no surrogates (U+D800..U+DFFF), at most U+10FFFF. */

#include <stddef.h>
#include <stdint.h>

/* Length (1..4) of the valid UTF-8 sequence at s[0..n), 0 if s[0] does not
 * start one (n == 0 included). *cp (may be NULL) receives the code point. */
size_t cr_utf8_seq(const char *s, size_t n, uint32_t *cp);

/* n if s[0..n) is valid UTF-8, else the offset of the first byte that does
 * not start a valid sequence. */
size_t cr_utf8_check(const char *s, size_t n);

/* Copies src[0..n) to dst, keeping valid UTF-8 sequences and reading every
 * other byte as Windows-1252 (0x80..0x9F through its table, 0xA0..0xFF as
 * U+00A0..U+00FF); the five bytes Windows-1252 leaves unassigned (0x81 0x8D
 * 0x8F 0x90 0x9D) become a space. dst needs 3 n bytes; returns the length
 * written (no NUL added). dst must not overlap src. */
size_t cr_utf8_from_cp1252(const char *src, size_t n, char *dst);

/* Writes code point cp (< 0x110000, not a surrogate) as UTF-8 into dst (4
 * bytes); returns its length. */
size_t cr_utf8_put(uint32_t cp, char *dst);

/* Copies src[0..n) to dst for showing on a terminal: text a script chose
 * (a model's log line or error message) must not move the cursor, clear
 * the screen, set the window title or start a line of its own. Printable
 * UTF-8 and tab are kept; newline is kept only if keep_newline; every other
 * C0 control, DEL, a C1 control (U+0080..U+009F) and a byte that does not
 * start valid UTF-8 (0x9B is CSI to an 8-bit terminal) becomes "\xHH" per
 * byte, newline and CR "\n" and "\r". dst needs 4 n + 1 bytes; it is
 * NUL-terminated; returns the length written. dst must not overlap src. */
size_t cr_utf8_escape(const char *src, size_t n, char *dst, int keep_newline);

#endif

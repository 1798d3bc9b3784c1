/* UTF-8 validity and Windows-1252 conversion: see cr_utf8.h. */
#include "base/cr_utf8.h"

size_t cr_utf8_seq(const char *s, size_t n, uint32_t *cp) {
    if (n == 0) return 0;
    const unsigned char *u = (const unsigned char *)s;
    size_t len;
    uint32_t c, min;
    if (u[0] < 0x80) len = 1, c = u[0], min = 0;
    else if (u[0] >= 0xC2 && u[0] <= 0xDF) len = 2, c = u[0] & 0x1Fu, min = 0x80;
    else if (u[0] >= 0xE0 && u[0] <= 0xEF) len = 3, c = u[0] & 0x0Fu, min = 0x800;
    else if (u[0] >= 0xF0 && u[0] <= 0xF4) len = 4, c = u[0] & 0x07u, min = 0x10000;
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((u[i] & 0xC0) != 0x80) return 0;
        c = c << 6 | (u[i] & 0x3Fu);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    if (cp) *cp = c;
    return len;
}

size_t cr_utf8_check(const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        if ((unsigned char)s[i] < 0x80) { /* ASCII runs without the decoder */
            i++;
            continue;
        }
        size_t k = cr_utf8_seq(s + i, n - i, NULL);
        if (!k) return i;
        i += k;
    }
    return n;
}

size_t cr_utf8_put(uint32_t cp, char *dst) {
    unsigned char *d = (unsigned char *)dst;
    if (cp < 0x80) {
        d[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        d[0] = (unsigned char)(0xC0 | cp >> 6);
        d[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        d[0] = (unsigned char)(0xE0 | cp >> 12);
        d[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        d[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    d[0] = (unsigned char)(0xF0 | cp >> 18);
    d[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
    d[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
    d[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Windows-1252 0x80..0x9F; 0 = unassigned. */
static const uint16_t cp1252_high[32] = {
    0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0,      0x017D, 0,      0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178,
};

size_t cr_utf8_from_cp1252(const char *src, size_t n, char *dst) {
    size_t i = 0, k = 0;
    while (i < n) {
        unsigned char c = (unsigned char)src[i];
        size_t len = c < 0x80 ? 1 : cr_utf8_seq(src + i, n - i, NULL);
        if (len) {
            for (size_t j = 0; j < len; j++) dst[k++] = src[i + j];
            i += len;
            continue;
        }
        uint32_t cp = c >= 0xA0 ? c : cp1252_high[c - 0x80];
        k += cp ? cr_utf8_put(cp, dst + k) : (dst[k] = ' ', 1);
        i++;
    }
    return k;
}

static char *hex_byte(char *d, unsigned char b) {
    static const char digits[] = "0123456789abcdef";
    *d++ = '\\', *d++ = 'x', *d++ = digits[b >> 4], *d++ = digits[b & 15];
    return d;
}

size_t cr_utf8_escape(const char *src, size_t n, char *dst, int keep_newline) {
    char *d = dst;
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)src[i];
        if (c >= 0x20 && c < 0x7F) {
            *d++ = (char)c, i++;
        } else if (c == '\t' || (c == '\n' && keep_newline)) {
            *d++ = (char)c, i++;
        } else if (c == '\n' || c == '\r') {
            *d++ = '\\', *d++ = c == '\n' ? 'n' : 'r', i++;
        } else {
            uint32_t cp;
            size_t k = c < 0x80 ? 0 : cr_utf8_seq(src + i, n - i, &cp);
            if (k && cp >= 0xA0) { /* printable beyond ASCII */
                for (size_t j = 0; j < k; j++) *d++ = src[i + j];
            } else {
                if (!k) k = 1; /* a control, DEL or a stray byte: each byte shown */
                for (size_t j = 0; j < k; j++) d = hex_byte(d, (unsigned char)src[i + j]);
            }
            i += k;
        }
    }
    *d = '\0';
    return (size_t)(d - dst);
}

#ifndef CR_VERSION_H
#define CR_VERSION_H
/* The one place the version is written: `crescent --version`, and
 * require("crescent").version through crescent.core.version. */
#define CR_VERSION "0.1.0"

#endif

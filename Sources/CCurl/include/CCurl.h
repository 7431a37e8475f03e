#ifndef JOBGRAPH_CCURL_H
#define JOBGRAPH_CCURL_H

// libcurl's easy interface, loaded with dlopen when the first download starts rather than linked:
// libcurl and the TLS, Kerberos and LDAP libraries it needs take about 4 ms to load, which every
// jobgraph command would pay, though most never download. Only what the download step uses is here,
// with fixed argument types where curl's functions are variadic (Swift cannot call those).
//
// The numbers are libcurl's, from curl/curl.h, which are part of its ABI and never change
// (libcurl.so.4 since 2006); CCurl.c compares them with that header wherever it is installed.

#include <stddef.h>
#include <stdint.h>

typedef enum {
    JOBGRAPH_CURLE_OK = 0,
    JOBGRAPH_CURLE_UNSUPPORTED_PROTOCOL = 1,
    JOBGRAPH_CURLE_COULDNT_RESOLVE_HOST = 6,
    JOBGRAPH_CURLE_COULDNT_CONNECT = 7,
    JOBGRAPH_CURLE_PARTIAL_FILE = 18,
    JOBGRAPH_CURLE_WRITE_ERROR = 23,
    JOBGRAPH_CURLE_OPERATION_TIMEDOUT = 28,
    JOBGRAPH_CURLE_ABORTED_BY_CALLBACK = 42,
    JOBGRAPH_CURLE_PEER_FAILED_VERIFICATION = 60,
} jobgraph_curl_code;

typedef enum {
    JOBGRAPH_CURLOPT_WRITEDATA = 10001,
    JOBGRAPH_CURLOPT_URL = 10002,
    JOBGRAPH_CURLOPT_ERRORBUFFER = 10010,
    JOBGRAPH_CURLOPT_USERAGENT = 10018,
    JOBGRAPH_CURLOPT_LOW_SPEED_LIMIT = 19,
    JOBGRAPH_CURLOPT_LOW_SPEED_TIME = 20,
    JOBGRAPH_CURLOPT_HEADERDATA = 10029,
    JOBGRAPH_CURLOPT_NOPROGRESS = 43,
    JOBGRAPH_CURLOPT_FOLLOWLOCATION = 52,
    JOBGRAPH_CURLOPT_XFERINFODATA = 10057,
    JOBGRAPH_CURLOPT_NOSIGNAL = 99,
    JOBGRAPH_CURLOPT_CONNECTTIMEOUT_MS = 156,
    JOBGRAPH_CURLOPT_PROTOCOLS_STR = 10318,
    JOBGRAPH_CURLOPT_POSTFIELDS = 10015,
    JOBGRAPH_CURLOPT_HTTPHEADER = 10023,
    JOBGRAPH_CURLOPT_CUSTOMREQUEST = 10036,
    JOBGRAPH_CURLOPT_NOBODY = 44,
    JOBGRAPH_CURLOPT_TIMEOUT_MS = 155,
    JOBGRAPH_CURLOPT_POSTFIELDSIZE_LARGE = 30120,
} jobgraph_curl_option;

typedef enum {
    JOBGRAPH_CURLINFO_RESPONSE_CODE = 0x200002,
    JOBGRAPH_CURLINFO_REDIRECT_URL = 0x10001F,
    JOBGRAPH_CURLINFO_CONTENT_LENGTH_DOWNLOAD_T = 0x60000F,
} jobgraph_curl_info;

/// libcurl's error buffer size (CURL_ERROR_SIZE).
enum { JOBGRAPH_CURL_ERROR_SIZE = 256 };

/// Body and header callbacks: return `size * count` to go on, anything else to stop the transfer.
typedef size_t (*jobgraph_curl_data_function)(char *bytes, size_t size, size_t count, void *context);
/// Progress callback, called at least once a second while a transfer runs: nonzero stops it.
typedef int (*jobgraph_curl_progress_function)(void *context, int64_t download_total, int64_t downloaded,
                                               int64_t upload_total, int64_t uploaded);

/// Loads libcurl once (later calls return the first answer) and initialises it. NULL when it is ready,
/// else why it cannot be used, in words for the user.
const char *jobgraph_curl_load(void);

/// The functions below need a successful `jobgraph_curl_load` first.
void *jobgraph_curl_easy_init(void);
void jobgraph_curl_easy_cleanup(void *handle);
jobgraph_curl_code jobgraph_curl_setopt_long(void *handle, jobgraph_curl_option option, long value);
/// For string, pointer (`...DATA`, `ERRORBUFFER`) options; libcurl copies strings.
jobgraph_curl_code jobgraph_curl_setopt_pointer(void *handle, jobgraph_curl_option option, const void *value);
jobgraph_curl_code jobgraph_curl_setopt_write_function(void *handle, jobgraph_curl_data_function function);
jobgraph_curl_code jobgraph_curl_setopt_header_function(void *handle, jobgraph_curl_data_function function);
jobgraph_curl_code jobgraph_curl_setopt_progress_function(void *handle, jobgraph_curl_progress_function function);
/// For `curl_off_t` options (`POSTFIELDSIZE_LARGE`).
jobgraph_curl_code jobgraph_curl_setopt_int64(void *handle, jobgraph_curl_option option, int64_t value);
/// A header list for `HTTPHEADER`: `list` is NULL for a new one; the caller frees the result with
/// `jobgraph_curl_slist_free_all` after the transfer. NULL when memory ran out.
void *jobgraph_curl_slist_append(void *list, const char *header);
void jobgraph_curl_slist_free_all(void *list);
jobgraph_curl_code jobgraph_curl_perform(void *handle);
jobgraph_curl_code jobgraph_curl_getinfo_long(void *handle, jobgraph_curl_info info, long *value);
jobgraph_curl_code jobgraph_curl_getinfo_int64(void *handle, jobgraph_curl_info info, int64_t *value);
/// A string libcurl owns, valid until the next transfer on `handle`; NULL when there is none.
const char *jobgraph_curl_getinfo_string(void *handle, jobgraph_curl_info info);
const char *jobgraph_curl_strerror(jobgraph_curl_code code);

#endif

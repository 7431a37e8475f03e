#include "CCurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// The option numbers of the callbacks, beside the others in CCurl.h's enum but not needed in Swift.
enum {
    CURLOPT_WRITEFUNCTION_NUMBER = 20011,
    CURLOPT_HEADERFUNCTION_NUMBER = 20079,
    CURLOPT_XFERINFOFUNCTION_NUMBER = 20219,
    CURL_GLOBAL_DEFAULT_FLAGS = 3,  // CURL_GLOBAL_SSL | CURL_GLOBAL_WIN32
};

static struct {
    int (*global_init)(long flags);
    void *(*easy_init)(void);
    void (*easy_cleanup)(void *handle);
    int (*easy_setopt)(void *handle, int option, ...);
    int (*easy_perform)(void *handle);
    int (*easy_getinfo)(void *handle, int info, ...);
    const char *(*easy_strerror)(int code);
    void *(*slist_append)(void *list, const char *header);
    void (*slist_free_all)(void *list);
} curl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const char *load_failure = NULL;
static char load_failure_text[512];

static void load(void) {
    // Debian's OpenSSL build first, then its GnuTLS build: the same API under another name.
    static const char *const names[] = {"libcurl.so.4", "libcurl-gnutls.so.4"};
    void *library = NULL;
    for (size_t index = 0; index < sizeof names / sizeof names[0] && library == NULL; index++) {
        library = dlopen(names[index], RTLD_NOW | RTLD_LOCAL);
    }
    if (library == NULL) {
        snprintf(load_failure_text, sizeof load_failure_text,
                 "downloads need libcurl (libcurl.so.4), which cannot be loaded: %s; install it with apt-get install libcurl4",
                 dlerror());
        load_failure = load_failure_text;
        return;
    }
    curl.global_init = (int (*)(long))dlsym(library, "curl_global_init");
    curl.easy_init = (void *(*)(void))dlsym(library, "curl_easy_init");
    curl.easy_cleanup = (void (*)(void *))dlsym(library, "curl_easy_cleanup");
    curl.easy_setopt = (int (*)(void *, int, ...))dlsym(library, "curl_easy_setopt");
    curl.easy_perform = (int (*)(void *))dlsym(library, "curl_easy_perform");
    curl.easy_getinfo = (int (*)(void *, int, ...))dlsym(library, "curl_easy_getinfo");
    curl.easy_strerror = (const char *(*)(int))dlsym(library, "curl_easy_strerror");
    curl.slist_append = (void *(*)(void *, const char *))dlsym(library, "curl_slist_append");
    curl.slist_free_all = (void (*)(void *))dlsym(library, "curl_slist_free_all");
    if (!curl.slist_append || !curl.slist_free_all || !curl.global_init || !curl.easy_init || !curl.easy_cleanup || !curl.easy_setopt || !curl.easy_perform
        || !curl.easy_getinfo || !curl.easy_strerror) {
        load_failure = "downloads need libcurl's easy interface, which the installed libcurl.so.4 lacks";
        return;
    }
    // Not thread-safe in libcurl, hence here, once, before any handle exists.
    if (curl.global_init(CURL_GLOBAL_DEFAULT_FLAGS) != JOBGRAPH_CURLE_OK) {
        load_failure = "libcurl failed to initialise (curl_global_init)";
    }
}

const char *jobgraph_curl_load(void) {
    pthread_once(&load_once, load);
    return load_failure;
}

void *jobgraph_curl_easy_init(void) { return curl.easy_init(); }

void jobgraph_curl_easy_cleanup(void *handle) { curl.easy_cleanup(handle); }

jobgraph_curl_code jobgraph_curl_setopt_long(void *handle, jobgraph_curl_option option, long value) {
    return (jobgraph_curl_code)curl.easy_setopt(handle, (int)option, value);
}

jobgraph_curl_code jobgraph_curl_setopt_pointer(void *handle, jobgraph_curl_option option, const void *value) {
    return (jobgraph_curl_code)curl.easy_setopt(handle, (int)option, value);
}

jobgraph_curl_code jobgraph_curl_setopt_write_function(void *handle, jobgraph_curl_data_function function) {
    return (jobgraph_curl_code)curl.easy_setopt(handle, CURLOPT_WRITEFUNCTION_NUMBER, function);
}

jobgraph_curl_code jobgraph_curl_setopt_header_function(void *handle, jobgraph_curl_data_function function) {
    return (jobgraph_curl_code)curl.easy_setopt(handle, CURLOPT_HEADERFUNCTION_NUMBER, function);
}

jobgraph_curl_code jobgraph_curl_setopt_progress_function(void *handle, jobgraph_curl_progress_function function) {
    return (jobgraph_curl_code)curl.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION_NUMBER, function);
}

jobgraph_curl_code jobgraph_curl_setopt_int64(void *handle, jobgraph_curl_option option, int64_t value) {
    return (jobgraph_curl_code)curl.easy_setopt(handle, (int)option, (long long)value);  // curl_off_t is 64 bits
}

void *jobgraph_curl_slist_append(void *list, const char *header) { return curl.slist_append(list, header); }

void jobgraph_curl_slist_free_all(void *list) { curl.slist_free_all(list); }

jobgraph_curl_code jobgraph_curl_perform(void *handle) { return (jobgraph_curl_code)curl.easy_perform(handle); }

jobgraph_curl_code jobgraph_curl_getinfo_long(void *handle, jobgraph_curl_info info, long *value) {
    return (jobgraph_curl_code)curl.easy_getinfo(handle, (int)info, value);
}

jobgraph_curl_code jobgraph_curl_getinfo_int64(void *handle, jobgraph_curl_info info, int64_t *value) {
    return (jobgraph_curl_code)curl.easy_getinfo(handle, (int)info, value);
}

const char *jobgraph_curl_getinfo_string(void *handle, jobgraph_curl_info info) {
    char *value = NULL;
    if (curl.easy_getinfo(handle, (int)info, &value) != JOBGRAPH_CURLE_OK) return NULL;
    return value;
}

const char *jobgraph_curl_strerror(jobgraph_curl_code code) { return curl.easy_strerror((int)code); }

// Where libcurl's own header is installed (libcurl4-openssl-dev), the build proves the numbers above
// and in CCurl.h are libcurl's.
#if __has_include(<curl/curl.h>)
#include <curl/curl.h>
#define SAME(a, b) _Static_assert((long)(a) == (long)(b), #a " differs from libcurl's");
SAME(CURLE_OK, JOBGRAPH_CURLE_OK) SAME(CURLE_UNSUPPORTED_PROTOCOL, JOBGRAPH_CURLE_UNSUPPORTED_PROTOCOL)
SAME(CURLE_COULDNT_RESOLVE_HOST, JOBGRAPH_CURLE_COULDNT_RESOLVE_HOST) SAME(CURLE_COULDNT_CONNECT, JOBGRAPH_CURLE_COULDNT_CONNECT)
SAME(CURLE_PARTIAL_FILE, JOBGRAPH_CURLE_PARTIAL_FILE) SAME(CURLE_WRITE_ERROR, JOBGRAPH_CURLE_WRITE_ERROR)
SAME(CURLE_OPERATION_TIMEDOUT, JOBGRAPH_CURLE_OPERATION_TIMEDOUT) SAME(CURLE_ABORTED_BY_CALLBACK, JOBGRAPH_CURLE_ABORTED_BY_CALLBACK)
SAME(CURLE_PEER_FAILED_VERIFICATION, JOBGRAPH_CURLE_PEER_FAILED_VERIFICATION)
SAME(CURLOPT_WRITEDATA, JOBGRAPH_CURLOPT_WRITEDATA) SAME(CURLOPT_URL, JOBGRAPH_CURLOPT_URL) SAME(CURLOPT_ERRORBUFFER, JOBGRAPH_CURLOPT_ERRORBUFFER)
SAME(CURLOPT_USERAGENT, JOBGRAPH_CURLOPT_USERAGENT) SAME(CURLOPT_LOW_SPEED_LIMIT, JOBGRAPH_CURLOPT_LOW_SPEED_LIMIT)
SAME(CURLOPT_LOW_SPEED_TIME, JOBGRAPH_CURLOPT_LOW_SPEED_TIME) SAME(CURLOPT_HEADERDATA, JOBGRAPH_CURLOPT_HEADERDATA)
SAME(CURLOPT_NOPROGRESS, JOBGRAPH_CURLOPT_NOPROGRESS) SAME(CURLOPT_FOLLOWLOCATION, JOBGRAPH_CURLOPT_FOLLOWLOCATION)
SAME(CURLOPT_XFERINFODATA, JOBGRAPH_CURLOPT_XFERINFODATA) SAME(CURLOPT_NOSIGNAL, JOBGRAPH_CURLOPT_NOSIGNAL)
SAME(CURLOPT_CONNECTTIMEOUT_MS, JOBGRAPH_CURLOPT_CONNECTTIMEOUT_MS) SAME(CURLOPT_PROTOCOLS_STR, JOBGRAPH_CURLOPT_PROTOCOLS_STR)
SAME(CURLINFO_RESPONSE_CODE, JOBGRAPH_CURLINFO_RESPONSE_CODE) SAME(CURLINFO_REDIRECT_URL, JOBGRAPH_CURLINFO_REDIRECT_URL)
SAME(CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, JOBGRAPH_CURLINFO_CONTENT_LENGTH_DOWNLOAD_T) SAME(CURL_ERROR_SIZE, JOBGRAPH_CURL_ERROR_SIZE)
SAME(CURLOPT_WRITEFUNCTION, CURLOPT_WRITEFUNCTION_NUMBER) SAME(CURLOPT_HEADERFUNCTION, CURLOPT_HEADERFUNCTION_NUMBER)
SAME(CURLOPT_XFERINFOFUNCTION, CURLOPT_XFERINFOFUNCTION_NUMBER) SAME(CURL_GLOBAL_DEFAULT, CURL_GLOBAL_DEFAULT_FLAGS)
SAME(CURLOPT_POSTFIELDS, JOBGRAPH_CURLOPT_POSTFIELDS) SAME(CURLOPT_HTTPHEADER, JOBGRAPH_CURLOPT_HTTPHEADER)
SAME(CURLOPT_CUSTOMREQUEST, JOBGRAPH_CURLOPT_CUSTOMREQUEST) SAME(CURLOPT_NOBODY, JOBGRAPH_CURLOPT_NOBODY)
SAME(CURLOPT_TIMEOUT_MS, JOBGRAPH_CURLOPT_TIMEOUT_MS) SAME(CURLOPT_POSTFIELDSIZE_LARGE, JOBGRAPH_CURLOPT_POSTFIELDSIZE_LARGE)
#endif

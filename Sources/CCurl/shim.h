// SPDX-License-Identifier: GPL-2.0-or-later
// curl_easy_setopt/getinfo are variadic, which Swift cannot call: one typed wrapper per argument kind.
#pragma once
#include <curl/curl.h>
#include <sys/eventfd.h>

static inline CURLcode ccurl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_setopt_ptr(CURL *h, CURLoption o, const void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_setopt_write(CURL *h, CURLoption o, curl_write_callback cb) {
    return curl_easy_setopt(h, o, cb);
}
static inline CURLcode ccurl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ccurl_getinfo_ptr(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ccurl_getinfo_socket(CURL *h, CURLINFO i, curl_socket_t *v) { return curl_easy_getinfo(h, i, v); }

// The multi socket API's options, typed likewise.
static inline CURLMcode ccurl_multi_setopt_ptr(CURLM *m, CURLMoption o, void *v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode ccurl_multi_setopt_socketfunction(CURLM *m, curl_socket_callback cb) {
    return curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, cb);
}
static inline CURLMcode ccurl_multi_setopt_timerfunction(CURLM *m, curl_multi_timer_callback cb) {
    return curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, cb);
}
static inline curl_socket_t ccurl_socket_timeout(void) { return CURL_SOCKET_TIMEOUT; }

/*
 * fuzz_http: httpd's request parser and response builder on arbitrary bytes.
 * Checks what must hold whatever the input: a complete request consumes
 * something and no more than it was given, its path lies inside the buffer,
 * and the head built for any route fits HTTP_HEAD_MAX.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "apps/httpd/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly `size` bytes, so reading past it is caught. */
	char *buf = malloc(size ? size : 1);
	memcpy(buf, data, size);
	size_t off = 0;
	for (int n = 0; n < 64 && off <= size; n++) {
		struct http_request req;
		enum http_parse_result r = http_parse(buf + off, size - off, 8192, &req);
		if (r == HTTP_INCOMPLETE)
			break;
		struct http_response resp;
		char head[HTTP_HEAD_MAX];
		if (r == HTTP_ERROR) {
			http_route(&req, req.status, true, &resp);
			if (http_head(&resp, 1, head) > HTTP_HEAD_MAX)
				abort();
			break;
		}
		if (req.length == 0 || req.length > size - off)
			abort();
		if (req.path < buf + off || req.path + req.path_len > buf + off + req.length)
			abort();
		http_route(&req, 0, true, &resp);
		if (http_head(&resp, req.minor, head) > HTTP_HEAD_MAX)
			abort();
		off += req.length;
	}
	free(buf);
	return 0;
}

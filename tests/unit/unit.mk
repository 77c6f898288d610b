# unit.mk: the host unit tests and the project sources each one tests.
# (See tests/tests.mk for the convention.)

# httpd's request parser and response builder (issue 4)
UNIT_TESTS += http
UNIT_SRCS_http := apps/httpd/http.c

#!/bin/sh
# a function written against plain maps: keys sorted, comments and styles lost
KPIPE_TEST_FUNCTION=maps exec "$KPIPE_TEST_BINARY"

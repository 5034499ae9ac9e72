#!/bin/sh
sed -e 's/old-value/half-value/'
echo failing late >&2
exit 5

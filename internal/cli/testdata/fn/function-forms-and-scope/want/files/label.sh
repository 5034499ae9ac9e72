#!/bin/sh
# appends its first argument and $SUFFIX to every "seen" annotation
sed -e "s/^\(      seen: \)'\{0,1\}\([^']*\)'\{0,1\}$/\1\2-$1$SUFFIX/"

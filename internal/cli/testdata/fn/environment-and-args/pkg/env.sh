#!/bin/sh
# records what it got in an annotation
sed -e "s|^\(    annotations:\)$|\1\n      env: '$SPEC_VAR $FLAG_VAR $BOTH ${EQUALS:-unset} $1 $2'|"

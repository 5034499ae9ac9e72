#!/bin/sh
# changes every old-value to new-value
sed -e 's/old-value/new-value/g'

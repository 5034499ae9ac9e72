#!/bin/sh
# turns a string into a map: kustomize's comment copy refuses
sed -e 's/^    k: old-value/    k: {now: a-map}/'

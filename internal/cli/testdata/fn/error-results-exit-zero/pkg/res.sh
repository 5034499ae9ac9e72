#!/bin/sh
# reports an error result but exits 0: kustomize writes, results ignored
sed -e 's/old-value/new-value/' -e '$a\
results:\
- message: looks wrong\
  severity: error'

#!/bin/sh
# prints plain YAML documents instead of a ResourceList: the items, unindented
sed -n -e '/^functionConfig:/q' -e '/^items:/d' -e 's/^- /---\n/' -e 's/^  //' -e 'p' | sed -e 's/old-value/plain-value/'

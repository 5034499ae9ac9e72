#!/bin/sh
# drops every object named gone (and prints the rest as a ResourceList)
awk '
/^- / || /^functionConfig:/ { flush(); keep = 1 }
/^functionConfig:/ { fc = 1 }
fc { print; next }
{ buf = buf $0 "\n" }
/name: gone$/ { keep = 0 }
function flush() { if (keep || buf !~ /^- /) printf "%s", buf; buf = "" }
END { flush() }'

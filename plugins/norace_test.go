package plugins

// raceEnabled says whether the test binary was built with -race (so must a
// Go plugin it loads be).
var raceEnabled = false

# Golden copies of exported files: the package test in here belongs to an exported package (it
# imports that package), so pytest must not collect it as one of ours.
collect_ignore_glob = ["*"]

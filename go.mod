module winx

go 1.26

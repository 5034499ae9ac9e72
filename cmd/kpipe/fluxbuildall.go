package main

import "github.com/urfave/cli/v2"

func fluxBuildAllCommand() *cli.Command {
	return &cli.Command{Name: "build-all", Usage: "not yet"}
}

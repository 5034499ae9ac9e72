package cli

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/internal/fnrun"
	"github.com/kpipe/kpipe/plugins"
)

// fnCommand is `kpipe fn`: KRM functions outside a build (package fnrun).
func fnCommand() *cli.Command {
	return &cli.Command{
		Name:  "fn",
		Usage: "run KRM configuration functions over a directory (kustomize's fn run, once config run)",
		Subcommands: []*cli.Command{
			{
				Name:      "run",
				Usage:     "run the functions configured in DIR over DIR's objects and write the result back, as kustomize's fn run writes it",
				ArgsUsage: "DIR",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "enable-exec", Usage: "enable KRM functions that run executables"},
					&cli.StringSliceFlag{Name: "env", Aliases: []string{"e"}, Usage: "KEY=VALUE for functions; KEY alone passes the variable on to container functions (repeatable)"},
					&cli.DurationFlag{Name: "plugin-timeout", Value: plugins.DefaultTimeout, Usage: "kill a function that runs longer than this"},
					&cli.BoolFlag{Name: "dry-run", Usage: "print the result (with path annotations) instead of writing the files"},
				},
				Action: runFn,
			},
			{
				Name:      "wrap",
				Usage:     "run CMD as a function: functionConfig fields as environment variables, CMD's output merged into the items",
				ArgsUsage: "-- CMD [ARGS...]",
				Action: func(c *cli.Context) error {
					return fnrun.Wrap(c.Context, c.Args().Slice(), os.Stdin, c.App.Writer, c.App.ErrWriter, os.Environ())
				},
			},
		},
	}
}

func runFn(c *cli.Context) error {
	ctx := c.Context
	if c.NArg() != 1 {
		return usage(c, "fn run: specify one directory, got %d arguments", c.NArg())
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	o := fnrun.Options{
		Plugins: plugins.Options{
			EnableExec: c.Bool("enable-exec"),
			Timeout:    c.Duration("plugin-timeout"),
			Env:        c.StringSlice("env"),
		},
		WorkDir: wd,
		Stderr:  c.App.ErrWriter,
	}
	if c.Bool("dry-run") {
		o.DryRun = c.App.Writer
	}
	_, err = fnrun.Run(ctx, c.Args().First(), o)
	return err
}

package cli

import (
	"flag"
	"os"
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"
)

// kpipe's help reads as it did with urfave/cli v3 (commit 7730963 to
// 97546ea): a flag's line names its value's type (--output string, not
// --output value) and gives no default for a boolean flag; USAGE says
// [options] and [command [command options]]; a command's own help
// subcommand is not listed.
func init() {
	cli.FlagStringer = flagString
	cli.AppHelpTemplate = strings.Replace(cli.AppHelpTemplate,
		"{{if .Commands}} command [command options]{{end}}",
		"{{if .VisibleCommands}} [command [command options]]{{end}}", 1)
	cli.CommandHelpTemplate = commandHelpTemplate
	cli.SubcommandHelpTemplate = commandHelpTemplate
	cli.HelpFlag = helpFlag{&cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show help"}}
}

// commandHelpTemplate is the help of a command, with subcommands or not.
const commandHelpTemplate = `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{if .UsageText}}{{wrap .UsageText 3}}{{else}}{{.HelpName}}{{if .VisibleCommands}} [command [command options]]{{else if .VisibleFlags}} [options]{{end}}{{if .ArgsUsage}} {{.ArgsUsage}}{{end}}{{end}}{{if .Description}}

DESCRIPTION:
   {{template "descriptionTemplate" .}}{{end}}{{if .VisibleCommands}}

COMMANDS:{{template "visibleCommandTemplate" .}}{{end}}{{if .VisibleFlags}}

OPTIONS:{{template "visibleFlagTemplate" .}}{{end}}
`

// flagString is a flag's line in help (cli.FlagStringer).
func flagString(f cli.Flag) string {
	df, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return ""
	}
	placeholder := ""
	if df.TakesValue() {
		switch f.(type) {
		case *cli.StringFlag, *cli.StringSliceFlag:
			placeholder = " string"
		case *cli.IntFlag:
			placeholder = " int"
		case *cli.DurationFlag:
			placeholder = " duration"
		default:
			placeholder = " value"
		}
	}
	names := make([]string, 0, 2)
	for _, n := range f.Names() {
		dashes := "--"
		if len(n) == 1 {
			dashes = "-"
		}
		names = append(names, dashes+n+placeholder)
	}
	line := strings.Join(names, ", ")
	if sf, ok := f.(cli.DocGenerationSliceFlag); ok && sf.IsSliceFlag() {
		line += " [ " + line + " ]"
	}
	line += "\t" + df.GetUsage()
	if _, isBool := f.(*cli.BoolFlag); !isBool {
		if d := df.GetDefaultText(); d != "" {
			line += " (default: " + d + ")"
		}
	}
	if env := df.GetEnvVars(); len(env) > 0 {
		if runtime.GOOS != "windows" || os.Getenv("PSHOME") != "" {
			line += " [$" + strings.Join(env, ", $") + "]"
		} else {
			line += " [%" + strings.Join(env, "%, %") + "%]"
		}
	}
	return line
}

// helpFlag is --help, -h. urfave/cli v2's own HelpFlag records its
// default in itself each time a command applies it, which races between
// runs in one process (the tests run builds in parallel); this one only
// adds itself to the flag set.
type helpFlag struct{ *cli.BoolFlag }

func (f helpFlag) Apply(set *flag.FlagSet) error {
	v := new(bool)
	for _, name := range f.Names() {
		set.BoolVar(v, name, false, f.Usage)
	}
	return nil
}

// helpCommand is a command's help subcommand (`kpipe cache help stats`,
// `kpipe build help`), not listed in the command's help. urfave/cli v2
// would add its one shared help command to every command it runs, writing
// into it each time (a race between runs in one process, as helpFlag's).
func helpCommand() *cli.Command {
	return &cli.Command{
		Name:            "help",
		Aliases:         []string{"h"},
		Usage:           "Shows a list of commands or help for one command",
		ArgsUsage:       "[command]",
		Hidden:          true,
		HideHelpCommand: true,
		Action: func(c *cli.Context) error {
			owner := c.Lineage()[1] // the command whose help this is
			if c.Args().Present() {
				return cli.ShowCommandHelp(owner, c.Args().First())
			}
			return showHelp(owner)
		},
	}
}

// showHelp prints the help of c's command, or kpipe's at the root.
func showHelp(c *cli.Context) error {
	if l := c.Lineage(); len(l) > 1 && l[1].App != nil {
		return cli.ShowCommandHelp(l[1], c.Command.Name)
	}
	return cli.ShowAppHelp(c)
}

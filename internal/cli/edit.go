package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/internal/kustfile"
	"github.com/kpipe/kpipe/loaders"
	"github.com/urfave/cli/v2"
)

// editCommand is `kpipe edit`: kustomize's `edit` subcommands (v5.8.2),
// working on the kustomization file in the current directory and
// rewriting it as kustomize does.
func editCommand() *cli.Command {
	return &cli.Command{
		Name:  "edit",
		Usage: "edit the kustomization file in the current directory, as `kustomize edit` does",
		Subcommands: []*cli.Command{
			{Name: "set", Usage: "set a value in the kustomization file", Subcommands: editSetCommands()},
			{Name: "add", Usage: "add an item to the kustomization file", Subcommands: editAddCommands()},
			{Name: "remove", Usage: "remove items from the kustomization file", Subcommands: editRemoveCommands()},
			{
				Name:  "alpha-list-builtin-plugin",
				Usage: "[Alpha] list the builtin plugins",
				Action: func(c *cli.Context) error {
					fmt.Fprint(c.App.Writer, "Builtin plugins:\n\n")
					for _, p := range builtinPluginNames {
						fmt.Fprintf(c.App.Writer, " * %s\n", p)
					}
					return nil
				},
			},
			{
				Name:   "fix",
				Usage:  "fix deprecated fields (patchesJson6902, patchesStrategicMerge, commonLabels, bases, imageTags; vars with --vars)",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "vars", Usage: "convert vars to replacements, rewriting $(VAR) in the resource files to VAR_PLACEHOLDER (we recommend doing this in a clean git repository where the change is easy to undo)"}},
				Action: editFix,
			},
		},
	}
}

// editFix is `edit fix`: as kustomize, it builds the kustomization before
// and after the rewrite and warns when the output changed or the build now
// fails. With --vars it converts vars to replacements and rewrites the
// resource files that use them (all computed before anything is written).
func editFix(c *cli.Context) error {
	ctx := c.Context
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	warn := func(msg string) { fmt.Fprintln(c.App.ErrWriter, msg) }
	before, _ := buildForFix(ctx, dir, warn)
	f, k, err := kustfile.Open(dir)
	if err != nil {
		return err
	}
	if err := kustfile.Fix(k, dir); err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	var edits []kustfile.FileEdit
	w := c.App.Writer
	if c.Bool("vars") {
		if edits, err = kustfile.ConvertVars(k, dir); err != nil {
			return err
		}
		fmt.Fprint(w, "\nFixed fields:\n  patchesJson6902 -> patches\n  patchesStrategicMerge -> patches\n  commonLabels -> labels\n  vars -> replacements\n")
	} else {
		fmt.Fprint(w, "\nFixed fields:\n  patchesJson6902 -> patches\n  patchesStrategicMerge -> patches\n  commonLabels -> labels\n\n"+
			"To convert vars -> replacements, run the command `kustomize edit fix --vars`\n\n"+
			"WARNING: Converting vars to replacements will potentially overwrite many resource files \n"+
			"and the resulting files may not produce the same output when `kustomize build` is run. \n"+
			"We recommend doing this in a clean git repository where the change is easy to undo.\n")
	}
	for _, e := range edits {
		if err := writeInPlace(e.Path, e.Data); err != nil {
			return err
		}
	}
	writeErr := f.Write(k)
	after, err := buildForFix(ctx, dir, warn)
	if err != nil {
		fmt.Fprintf(w, "Warning: 'Fixed' kustomization now produces the error when running `kpipe build`: %s\n", err)
	} else if !bytes.Equal(after, before) {
		fmt.Fprintf(w, "Warning: 'Fixed' kustomization now produces different output when running `kpipe build`:\n...%s...\n", after)
	}
	return writeErr
}

// writeInPlace replaces the content of the file at path (through a
// symlink, keeping its mode) atomically.
func writeInPlace(path string, data []byte) error {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	fi, err := os.Stat(target)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return kustfile.WriteAtomic(target, data, fi.Mode().Perm())
}

// buildForFix builds dir as `kpipe build` with default flags and no cache,
// its warnings to warn (kustomize prints its builds' warnings).
func buildForFix(ctx context.Context, dir string, warn func(string)) ([]byte, error) {
	_, res := engine.Build(ctx, engine.Request{Dirs: []string{dir}, Load: engine.LoadOptions{Restriction: loaders.RootOnly},
		Options: engine.Options{Warn: warn}})
	return res[0].YAML, res[0].Err
}

// builtinPluginNames are kustomize v5.8.2's builtin plugins, sorted
// (`kustomize edit alpha-list-builtin-plugin` prints them in Go map order).
var builtinPluginNames = []string{
	"AnnotationsTransformer",
	"ConfigMapGenerator",
	"HashTransformer",
	"HelmChartInflationGenerator",
	"IAMPolicyGenerator",
	"ImageTagTransformer",
	"LabelTransformer",
	"NamespaceTransformer",
	"PatchJson6902Transformer",
	"PatchStrategicMergeTransformer",
	"PatchTransformer",
	"PrefixSuffixTransformer",
	"PrefixTransformer",
	"ReplacementTransformer",
	"ReplicaCountTransformer",
	"SecretGenerator",
	"SuffixTransformer",
	"ValueAddTransformer",
}

// errNoChange tells editAction to leave the file as it is.
var errNoChange = errors.New("no change")

// editAction opens the kustomization file of the current directory, runs
// change on it and writes it back atomically; an error leaves the file as
// it was.
func editAction(change func(c *cli.Context, dir string, f *kustfile.File, k *loaders.Kustomization) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		dir, err := os.Getwd()
		if err != nil {
			return err
		}
		f, k, err := kustfile.Open(dir)
		if err != nil {
			return err
		}
		if err := change(c, dir, f, k); err == errNoChange {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		return f.Write(k)
	}
}

// editOne is a subcommand that takes exactly one value.
func editOne(name, what, usage string, set func(k *loaders.Kustomization, v string)) *cli.Command {
	return &cli.Command{
		Name: name, Usage: usage, ArgsUsage: "VALUE",
		Action: editAction(func(c *cli.Context, _ string, _ *kustfile.File, k *loaders.Kustomization) error {
			if c.NArg() != 1 {
				return fmt.Errorf("must specify exactly one %s value", what)
			}
			set(k, c.Args().First())
			return nil
		}),
	}
}

func forceFlag(usage string) cli.Flag {
	return &cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: usage}
}

func editSetCommands() []*cli.Command {
	return []*cli.Command{
		editGenerator("set", "configmap"),
		editGenerator("set", "secret"),
		editOne("nameprefix", "prefix", "set namePrefix", func(k *loaders.Kustomization, v string) { k.NamePrefix = v }),
		editOne("namesuffix", "suffix", "set nameSuffix", func(k *loaders.Kustomization, v string) { k.NameSuffix = v }),
		editOne("namespace", "namespace", "set namespace", func(k *loaders.Kustomization, v string) { k.Namespace = v }),
		{
			Name: "image", Usage: "set images' new names, tags or digests", ArgsUsage: "NAME[=NEWNAME][:TAG][@DIGEST]...",
			Action: editAction(func(c *cli.Context, _ string, _ *kustfile.File, k *loaders.Kustomization) error {
				return kustfile.SetImages(k, c.Args().Slice())
			}),
		},
		{
			Name: "replicas", Usage: "set replica counts", ArgsUsage: "NAME=COUNT...",
			Action: editAction(func(c *cli.Context, _ string, _ *kustfile.File, k *loaders.Kustomization) error {
				return kustfile.SetReplicas(k, c.Args().Slice())
			}),
		},
		{
			Name: "label", Usage: "set commonLabels (overwriting)", ArgsUsage: "KEY:VALUE...",
			Action: editAction(func(c *cli.Context, _ string, _ *kustfile.File, k *loaders.Kustomization) error {
				m, err := kustfile.ParsePairs(c.Args().Slice(), "label")
				if err == nil {
					kustfile.SetLabels(k, m)
				}
				return err
			}),
		},
		{
			Name: "annotation", Usage: "set commonAnnotations (overwriting)", ArgsUsage: "KEY:VALUE...",
			Action: editAction(func(c *cli.Context, _ string, _ *kustfile.File, k *loaders.Kustomization) error {
				m, err := kustfile.ParsePairs(c.Args().Slice(), "annotation")
				if err == nil {
					kustfile.SetAnnotations(k, m)
				}
				return err
			}),
		},
		{
			Name: "buildmetadata", Usage: "set buildMetadata options", ArgsUsage: "OPTION[,OPTION]",
			Action: editAction(func(c *cli.Context, _ string, _ *kustfile.File, k *loaders.Kustomization) error {
				opts, err := buildMetadataArgs(c.Args().Slice())
				if err == nil {
					k.BuildMetadata = opts
				}
				return err
			}),
		},
	}
}

// buildMetadataArgs parses OPTION[,OPTION] and checks the option names.
func buildMetadataArgs(args []string) ([]string, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("must specify buildMetadata options, comma-separated, with no spaces")
	}
	opts := strings.Split(args[0], ",")
	for _, o := range opts {
		switch o {
		case "originAnnotations", "transformerAnnotations", "managedByLabel":
		default:
			return nil, fmt.Errorf("invalid buildMetadata option: %s", o)
		}
	}
	return opts, nil
}

// kustomizeLog prints a line on stderr as kustomize's log.Printf does:
// after the local date and time.
func kustomizeLog(c *cli.Context) func(string) {
	l := log.New(c.App.ErrWriter, "", log.LstdFlags)
	return func(s string) { l.Print(s) }
}

// How an `add` subcommand expands its paths, as kustomize does.
const (
	globVerify = iota // each must match, else the command fails (resource, component)
	globWarn          // one with no match is logged and skipped (generator, transformer, configuration)
)

// editAddList is an `add` subcommand for a list of files or directories.
func editAddList(name, kind string, list func(k *loaders.Kustomization) *[]string, glob int, noVerifyFlag bool) *cli.Command {
	cmd := &cli.Command{
		Name: name, Usage: "add " + kind + " paths (globs)", ArgsUsage: "PATH...",
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				if glob == globWarn {
					return fmt.Errorf("must specify a yaml file which contains a %s resource", map[string]string{
						"generator": "generator plugin", "transformer": "transformer plugin", "configuration": "configuration"}[kind])
				}
				return fmt.Errorf("must specify a %s file", kind)
			}
			dir, err := os.Getwd()
			if err != nil {
				return err
			}
			var items []string
			if glob == globWarn {
				items, err = kustfile.GlobOrWarn(dir, c.Args().Slice(), kustomizeLog(c))
				if err != nil && kind == "configuration" {
					err = fmt.Errorf("glob patterns: %w", err)
				}
			} else {
				items, err = kustfile.Glob(dir, c.Args().Slice(), noVerifyFlag && c.Bool("no-verify"))
			}
			if err != nil || len(items) == 0 {
				return err
			}
			return editAction(func(c *cli.Context, _ string, f *kustfile.File, k *loaders.Kustomization) error {
				self := filepath.Base(f.Path)
				if glob == globWarn {
					self = "" // kustomize adds the kustomization file itself here
				}
				l := list(k)
				*l = kustfile.AddUnique(*l, items, self, kind, kustomizeLog(c))
				return nil
			})(c)
		},
	}
	if noVerifyFlag {
		cmd.Flags = []cli.Flag{&cli.BoolFlag{Name: "no-verify", Usage: "skip checking that the resource exists"}}
	}
	return cmd
}

func editAddCommands() []*cli.Command {
	return []*cli.Command{
		editGenerator("add", "configmap"),
		editGenerator("add", "secret"),
		editPatch("add"),
		editAddList("resource", "resource", func(k *loaders.Kustomization) *[]string { return &k.Resources }, globVerify, true),
		{
			Name: "base", Usage: "add base directories to resources", ArgsUsage: "DIR[,DIR]",
			Action: editAction(func(c *cli.Context, dir string, _ *kustfile.File, k *loaders.Kustomization) error {
				if c.NArg() != 1 {
					return fmt.Errorf("must specify a base directory")
				}
				for _, p := range strings.Split(c.Args().First(), ",") {
					if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
						return fmt.Errorf("%s does not exist", p)
					}
					if slices.Contains(k.Resources, p) {
						return fmt.Errorf("base %s already in kustomization file", p)
					}
					k.Resources = append(k.Resources, p)
				}
				return nil
			}),
		},
		editAddList("component", "component", func(k *loaders.Kustomization) *[]string { return &k.Components }, globVerify, false),
		editAddList("transformer", "transformer", func(k *loaders.Kustomization) *[]string { return &k.Transformers }, globWarn, false),
		editAddList("generator", "generator", func(k *loaders.Kustomization) *[]string { return &k.Generators }, globWarn, false),
		editAddList("configuration", "configuration", func(k *loaders.Kustomization) *[]string { return &k.Configurations }, globWarn, false),
		{
			Name: "label", Usage: "add commonLabels (or labels with --without-selector)", ArgsUsage: "KEY:VALUE...",
			Flags: []cli.Flag{
				forceFlag("overwrite commonLabel if it already exists"),
				&cli.BoolFlag{Name: "without-selector", Usage: "add to labels, without selectors"},
				&cli.BoolFlag{Name: "include-templates", Usage: "include labels in templates (requires --without-selector)"},
			},
			Action: editAction(func(c *cli.Context, _ string, _ *kustfile.File, k *loaders.Kustomization) error {
				m, err := kustfile.ParsePairs(c.Args().Slice(), "label")
				if err != nil {
					return err
				}
				return kustfile.AddLabels(k, m, kustfile.LabelOptions{
					Force: c.Bool("force"), WithoutSelector: c.Bool("without-selector"), IncludeTemplates: c.Bool("include-templates"),
				})
			}),
		},
		{
			Name: "annotation", Usage: "add commonAnnotations", ArgsUsage: "KEY:VALUE...",
			Flags: []cli.Flag{forceFlag("overwrite commonAnnotation if it already exists")},
			Action: editAction(func(c *cli.Context, _ string, _ *kustfile.File, k *loaders.Kustomization) error {
				m, err := kustfile.ParsePairs(c.Args().Slice(), "annotation")
				if err != nil {
					return err
				}
				return kustfile.AddAnnotations(k, m, c.Bool("force"))
			}),
		},
		{
			Name: "buildmetadata", Usage: "add buildMetadata options", ArgsUsage: "OPTION[,OPTION]",
			Action: editAction(func(c *cli.Context, _ string, _ *kustfile.File, k *loaders.Kustomization) error {
				opts, err := buildMetadataArgs(c.Args().Slice())
				if err != nil {
					return err
				}
				for _, o := range opts {
					for _, have := range k.BuildMetadata {
						if have == o {
							return fmt.Errorf("buildMetadata option %s already in kustomization file", o)
						}
					}
					k.BuildMetadata = append(k.BuildMetadata, o)
				}
				return nil
			}),
		},
	}
}

// editRemoveList is a `remove` subcommand for a list of paths (globs).
func editRemoveList(name string, list func(k *loaders.Kustomization) *[]string) *cli.Command {
	return &cli.Command{
		Name: name, Usage: "remove " + name + " entries matching the patterns", ArgsUsage: "PATTERN...",
		Action: editAction(func(c *cli.Context, _ string, _ *kustfile.File, k *loaders.Kustomization) error {
			if c.NArg() == 0 {
				return fmt.Errorf("must specify a %s file", name)
			}
			l := list(k)
			out, hit, err := kustfile.RemoveMatching(*l, c.Args().Slice())
			if err != nil {
				return err
			}
			if !hit {
				return errNoChange // kustomize leaves the file untouched
			}
			*l = out
			return nil
		}),
	}
}

// editRemoveKeys is `remove label|annotation KEY[,KEY]`.
func editRemoveKeys(kind, field string, m func(k *loaders.Kustomization) map[string]string) *cli.Command {
	return &cli.Command{
		Name: kind, Usage: "remove " + field + " keys", ArgsUsage: "KEY[,KEY]",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "ignore-non-existence", Aliases: []string{"i"}, Usage: "ignore a key that does not exist"}},
		Action: editAction(func(c *cli.Context, _ string, _ *kustfile.File, k *loaders.Kustomization) error {
			switch c.NArg() {
			case 0:
				return fmt.Errorf("must specify %s", kind)
			case 1:
			default:
				return fmt.Errorf("%ss must be comma-separated, with no spaces", kind)
			}
			keys := strings.Split(c.Args().First(), ",")
			for _, key := range keys {
				if key == "" {
					return fmt.Errorf("invalid %s: '' (name is empty)", kind)
				}
			}
			target := m(k)
			if target == nil && !c.Bool("ignore-non-existence") {
				return fmt.Errorf("%s is not defined in kustomization file", field)
			}
			return kustfile.RemoveKeys(target, keys, kind, c.Bool("ignore-non-existence"))
		}),
	}
}

func editRemoveCommands() []*cli.Command {
	return []*cli.Command{
		editRemoveGenerator("configmap"),
		editRemoveGenerator("secret"),
		editPatch("remove"),
		editRemoveList("resource", func(k *loaders.Kustomization) *[]string { return &k.Resources }),
		editRemoveList("component", func(k *loaders.Kustomization) *[]string { return &k.Components }),
		editRemoveList("transformer", func(k *loaders.Kustomization) *[]string { return &k.Transformers }),
		editRemoveKeys("label", "commonLabels", func(k *loaders.Kustomization) map[string]string { return k.CommonLabels }),
		editRemoveKeys("annotation", "commonAnnotations", func(k *loaders.Kustomization) map[string]string { return k.CommonAnnotations }),
		{
			Name: "buildmetadata", Usage: "remove buildMetadata options", ArgsUsage: "OPTION[,OPTION]",
			Action: editAction(func(c *cli.Context, _ string, _ *kustfile.File, k *loaders.Kustomization) error {
				opts, err := buildMetadataArgs(c.Args().Slice())
				if err != nil {
					return err
				}
				var keep []string
				for _, o := range k.BuildMetadata {
					if !strings.Contains(","+strings.Join(opts, ",")+",", ","+o+",") {
						keep = append(keep, o)
					}
				}
				k.BuildMetadata = keep
				return nil
			}),
		},
	}
}

// stringArray is a repeatable flag whose values are kept whole (cobra's
// StringArray: no splitting at commas), for --from-literal.
type stringArray []string

func (s *stringArray) Set(v string) error { *s = append(*s, v); return nil }
func (s *stringArray) String() string     { return strings.Join(*s, ",") }
func (s *stringArray) Get() any           { return []string(*s) }

// stringSlice is a repeatable flag whose values are also split at commas
// (cobra's StringSlice), for --from-file.
type stringSlice []string

func (s *stringSlice) Set(v string) error { *s = append(*s, strings.Split(v, ",")...); return nil }
func (s *stringSlice) String() string     { return strings.Join(*s, ",") }
func (s *stringSlice) Get() any           { return []string(*s) }

// generatorValues returns the values of the repeatable flag name (a
// stringArray or stringSlice), or nil where the command has no such flag.
func generatorValues(c *cli.Context, name string) []string {
	v, _ := c.Value(name).([]string)
	return v
}

// editGenerator is `add|set configmap|secret`.
func editGenerator(verb, kind string) *cli.Command {
	flags := []cli.Flag{
		&cli.GenericFlag{Name: "from-literal", Value: &stringArray{}, Usage: "key=value (repeatable)"},
		&cli.StringFlag{Name: "namespace", Usage: "namespace of the " + kind},
	}
	if verb == "add" {
		flags = append(flags,
			&cli.GenericFlag{Name: "from-file", Value: &stringSlice{}, Usage: "[key=]path (repeatable, globs)"},
			&cli.StringFlag{Name: "from-env-file", Usage: "file of key=value lines"},
			&cli.BoolFlag{Name: "disableNameSuffixHash", Usage: "disable the name suffix hash"},
			&cli.StringFlag{Name: "behavior", Usage: "create, merge or replace"},
		)
		if kind == "secret" {
			flags = append(flags, &cli.StringFlag{Name: "type", Value: "Opaque", Usage: "the secret type"})
		}
	} else {
		flags = append(flags, &cli.StringFlag{Name: "new-namespace", Usage: "new namespace of the " + kind})
	}
	return &cli.Command{
		Name: kind, Usage: verb + " a " + kind + " generator", ArgsUsage: "NAME", Flags: flags,
		Action: func(c *cli.Context) error {
			dir, err := os.Getwd()
			if err != nil {
				return err
			}
			g := kustfile.GeneratorFlags{
				FileSources:           generatorValues(c, "from-file"),
				LiteralSources:        generatorValues(c, "from-literal"),
				EnvFileSource:         c.String("from-env-file"),
				Behavior:              c.String("behavior"),
				Type:                  c.String("type"),
				Namespace:             c.String("namespace"),
				NewNamespace:          c.String("new-namespace"),
				DisableNameSuffixHash: c.Bool("disableNameSuffixHash"),
			}
			if err := g.ExpandFileSources(dir); err != nil {
				return err
			}
			if verb == "add" {
				err = g.ValidateAdd(c.Args().Slice())
			} else {
				err = g.ValidateSet(c.Args().Slice())
			}
			if err != nil {
				return err
			}
			return editAction(func(_ *cli.Context, dir string, _ *kustfile.File, k *loaders.Kustomization) error {
				switch {
				case verb == "add" && kind == "configmap":
					return kustfile.AddConfigMap(k, g, dir)
				case verb == "add":
					return kustfile.AddSecret(k, g, dir)
				case kind == "configmap":
					return kustfile.SetConfigMap(k, g, dir)
				}
				return kustfile.SetSecret(k, g, dir)
			})(c)
		},
	}
}

// editRemoveGenerator is `remove configmap|secret NAME[,NAME]`.
func editRemoveGenerator(kind string) *cli.Command {
	return &cli.Command{
		Name: kind, Usage: "remove " + kind + " generators", ArgsUsage: "NAME[,NAME]",
		Flags: []cli.Flag{&cli.StringFlag{Name: "namespace", Usage: "namespace of the " + kind + "(s)"}},
		Action: editAction(func(c *cli.Context, _ string, _ *kustfile.File, k *loaders.Kustomization) error {
			switch {
			case c.NArg() == 0:
				return fmt.Errorf("at least one %s name must be specified", kind)
			case c.NArg() > 1:
				return fmt.Errorf("too many arguments: %s; to provide multiple %ss to remove, please separate %s names by commas", c.Args().Slice(), kind, kind)
			}
			return kustfile.RemoveGenerators(k, strings.Split(c.Args().First(), ","), c.String("namespace"), kind == "secret", kustomizeLog(c))
		}),
	}
}

// editPatch is `add|remove patch`.
func editPatch(verb string) *cli.Command {
	return &cli.Command{
		Name: "patch", Usage: verb + " an item of patches", ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "path", Usage: "path to the patch file"},
			&cli.StringFlag{Name: "patch", Usage: "the patch, inline"},
			&cli.StringFlag{Name: "group", Usage: "API group in patch target"},
			&cli.StringFlag{Name: "version", Usage: "API version in patch target"},
			&cli.StringFlag{Name: "kind", Usage: "resource kind in patch target"},
			&cli.StringFlag{Name: "name", Usage: "resource name in patch target"},
			&cli.StringFlag{Name: "namespace", Usage: "resource namespace in patch target"},
			&cli.StringFlag{Name: "annotation-selector", Usage: "annotationSelector in patch target"},
			&cli.StringFlag{Name: "label-selector", Usage: "labelSelector in patch target"},
		},
		Action: editAction(func(c *cli.Context, _ string, _ *kustfile.File, k *loaders.Kustomization) error {
			p := loaders.Patch{Path: c.String("path"), Patch: c.String("patch"), Target: &loaders.Selector{
				Group: c.String("group"), Version: c.String("version"), Kind: c.String("kind"),
				Name: c.String("name"), Namespace: c.String("namespace"),
				AnnotationSelector: c.String("annotation-selector"), LabelSelector: c.String("label-selector"),
			}}
			var changed bool
			var err error
			if verb == "add" {
				changed, err = kustfile.AddPatch(k, p)
			} else if changed, err = kustfile.RemovePatch(k, p); err == nil && !changed {
				kustomizeLog(c)(fmt.Sprintf("patch %s doesn't exist in kustomization file", p.Patch))
			}
			if err == nil && !changed {
				return errNoChange
			}
			return err
		}),
	}
}

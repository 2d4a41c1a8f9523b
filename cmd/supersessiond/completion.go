package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// CompletionCommand is `completion bash|zsh`: a completion script for the
// shell. The commands, their summaries and their flags are read from the
// commands themselves (commands, flagsOf), so the script cannot drift from
// what the binary accepts.
type CompletionCommand struct{ m *Main }

// completionShells are the shells a script is written for.
var completionShells = map[string]func(w io.Writer, cmds []completionCmd){
	"bash": writeBashCompletion,
	"zsh":  writeZshCompletion,
}

func (c *CompletionCommand) Run(ctx context.Context, args []string) error {
	fs, _ := c.m.newFlagSet("completion", "bash|zsh")
	pos, err := c.m.parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("completion: name one shell, bash or zsh; see supersessiond completion --help")
	}
	write, ok := completionShells[pos[0]]
	if !ok {
		return usagef("completion: no script for %q: bash or zsh; see supersessiond completion --help", pos[0])
	}
	write(c.m.Stdout, c.m.completionCmds(ctx))
	return nil
}

// completionCmd is what a script knows of one command.
type completionCmd struct {
	name, summary string
	flags         []completionFlag
	args          []string // words its positional arguments are chosen from; none: files
}

type completionFlag struct {
	name, usage string
	value       string // the value's name ("" for a boolean flag)
}

// takesPath reports whether the flag's value is a file name.
func (f completionFlag) takesPath() bool { return f.value == "path" || f.value == "file" }

func (m *Main) completionCmds(ctx context.Context) []completionCmd {
	cmds := m.commands()
	var out []completionCmd
	for _, name := range m.commandNames() {
		c := completionCmd{name: name, summary: cmds[name].summary}
		if fs := m.flagsOf(ctx, name); fs != nil {
			fs.VisitAll(func(f *flag.Flag) {
				value, usage := flag.UnquoteUsage(f)
				if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
					value = ""
				}
				c.flags = append(c.flags, completionFlag{name: f.Name, usage: usage, value: value})
			})
		}
		c.flags = append(c.flags, completionFlag{name: "help", usage: "print this help"})
		switch name {
		case "help":
			c.args = m.commandNames()
		case "completion":
			for sh := range completionShells {
				c.args = append(c.args, sh)
			}
			sort.Strings(c.args)
		}
		out = append(out, c)
	}
	return out
}

func writeBashCompletion(w io.Writer, cmds []completionCmd) {
	var names []string
	for _, c := range cmds {
		names = append(names, c.name)
	}
	fmt.Fprintf(w, `# bash completion for supersessiond, written by 'supersessiond completion bash'.
# Now:             source <(supersessiond completion bash)
# For every shell: supersessiond completion bash > /etc/bash_completion.d/supersessiond
_supersessiond() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	if [[ $COMP_CWORD -eq 1 ]]; then
		COMPREPLY=($(compgen -W '%s --help --version' -- "$cur"))
		return
	fi
	local flags='' values='' paths='' args=''
	case ${COMP_WORDS[1]} in
`, strings.Join(names, " "))
	for _, c := range cmds {
		var flags, values, paths []string
		for _, f := range c.flags {
			flags = append(flags, "--"+f.name)
			if f.value != "" {
				values = append(values, "--"+f.name)
			}
			if f.takesPath() {
				paths = append(paths, "--"+f.name)
			}
		}
		fmt.Fprintf(w, "\t%s) flags='%s' values='%s' paths='%s' args='%s' ;;\n",
			c.name, strings.Join(flags, " "), strings.Join(values, " "), strings.Join(paths, " "), strings.Join(c.args, " "))
	}
	fmt.Fprint(w, `	esac
	if [[ " $values " == *" $prev "* ]]; then
		# A flag's value: file names for paths, nothing to offer otherwise.
		if [[ " $paths " == *" $prev "* ]]; then
			COMPREPLY=($(compgen -f -- "$cur"))
		else
			COMPREPLY=()
		fi
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$flags" -- "$cur"))
	elif [[ -n $args ]]; then
		COMPREPLY=($(compgen -W "$args" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -o filenames -F _supersessiond supersessiond
`)
}

func writeZshCompletion(w io.Writer, cmds []completionCmd) {
	fmt.Fprint(w, `#compdef supersessiond
# zsh completion for supersessiond, written by 'supersessiond completion zsh'.
# Now:             source <(supersessiond completion zsh)
# For every shell: supersessiond completion zsh > "${fpath[1]}/_supersessiond"
_supersessiond() {
	local -a commands
	commands=(
`)
	for _, c := range cmds {
		fmt.Fprintf(w, "\t\t%s\n", zshQuote(c.name+":"+c.summary))
	}
	fmt.Fprint(w, `	)
	if (( CURRENT == 2 )); then
		if [[ $PREFIX == -* ]]; then
			compadd -- --help --version
		else
			_describe -t commands 'supersessiond command' commands
		fi
		return
	fi
	local cmd=$words[2]
	shift words
	(( CURRENT-- ))
	case $cmd in
`)
	for _, c := range cmds {
		specs := make([]string, 0, len(c.flags)+1)
		for _, f := range c.flags {
			desc := zshEscapeDesc(f.usage)
			switch {
			case f.value == "":
				specs = append(specs, zshQuote(fmt.Sprintf("--%s[%s]", f.name, desc)))
			case f.takesPath():
				specs = append(specs, zshQuote(fmt.Sprintf("--%s=[%s]:%s:_files", f.name, desc, f.value)))
			default:
				specs = append(specs, zshQuote(fmt.Sprintf("--%s=[%s]:%s: ", f.name, desc, f.value)))
			}
		}
		if len(c.args) > 0 {
			specs = append(specs, zshQuote("1:argument:("+strings.Join(c.args, " ")+")"))
		} else {
			specs = append(specs, zshQuote("*:argument:_files"))
		}
		fmt.Fprintf(w, "\t(%s)\n\t\t_arguments \\\n\t\t\t%s\n\t\t;;\n", c.name, strings.Join(specs, " \\\n\t\t\t"))
	}
	fmt.Fprint(w, `	esac
}
if [[ $funcstack[1] == _supersessiond ]]; then
	_supersessiond "$@"
else
	compdef _supersessiond supersessiond
fi
`)
}

// zshQuote single-quotes s for zsh.
func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// zshEscapeDesc escapes what _arguments reads inside a description's [...].
func zshEscapeDesc(s string) string {
	return strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, ":", `\:`).Replace(s)
}

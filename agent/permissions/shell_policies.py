"""Argument-level policies for the programs gosling knows to be read-only (the data).

In the spirit of Codex's execpolicy: each program lists the options it may be given, and
anything not listed (an unknown option, an abbreviation, a write such as `git diff
--output`, `find -exec`, `sed -i`) is outside the policy, so the line asks. Option syntax,
one word per option:

- `-x` a flag; `-x:` takes a value (attached `-xV` or the next word); `-x::` an optional
  value, attached only (`-u[mode]`);
- `--name` a flag; `--name=` takes a value (`--name=V` or the next word); `--name[=]` an
  optional value, attached only (`--color[=WHEN]`).

`numbers` accepts `-5`-style counts; `positionals` caps the operands (None: any); `check`
names a validator in `shell_policy_check` for the operands (`sed` scripts, `date` formats).
`git` is a table of subcommands, each with its own policy, after git's global options.
`find` words are whole predicates (`style="find"`).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Policy:
    options: str = ""
    numbers: bool = False
    positionals: int | None = None
    check: str | None = None
    style: str = "getopt"
    """`getopt` (GNU options, bundling, `--` ends them) or `find` (whole-word predicates)."""
    subcommands: dict[str, Policy] = field(default_factory=dict)


_DIFF = (
    "-p --patch -u -s --no-patch -U: --unified= --raw --patch-with-raw --stat[=] --numstat "
    "--shortstat --dirstat[=] --summary --name-only --name-status --compact-summary -z "
    "--no-color --color[=] --word-diff[=] --word-diff-regex= --color-words[=] --no-renames "
    "--find-renames[=] -M:: -C:: -B:: -D --irreversible-delete --diff-filter= -S: -G: "
    "--pickaxe-all --pickaxe-regex -R --relative[=] --no-relative -a --text "
    "--ignore-space-at-eol -b --ignore-space-change -w --ignore-all-space "
    "--ignore-blank-lines --ignore-cr-at-eol --minimal --patience --histogram "
    "--diff-algorithm= --indent-heuristic --no-indent-heuristic --function-context -W "
    "--exit-code --quiet --check --full-index --binary --abbrev[=] --no-prefix "
    "--src-prefix= --dst-prefix= --inter-hunk-context= --ita-invisible-in-index "
    "--no-ext-diff --no-textconv --ws-error-highlight= --color-moved[=] --no-color-moved"
)
_LOG = (
    _DIFF + " -n: --max-count= --skip= --since= --after= --until= --before= --author= "
    "--committer= --grep= --all-match --invert-grep -i --regexp-ignore-case -E "
    "--extended-regexp -F --fixed-strings --merges --no-merges --first-parent --all "
    "--branches[=] --tags[=] --remotes[=] --oneline --graph --decorate[=] --no-decorate "
    "--format= --pretty[=] --abbrev-commit --no-abbrev-commit --date= --relative-date "
    "--reverse --follow --topo-order --date-order --author-date-order --parents --children "
    "--left-right --cherry-pick --cherry-mark --boundary --simplify-by-decoration "
    "--source --full-history -m --cc --dd --no-walk[=] --encoding= --notes[=] --no-notes "
    "--mailmap --no-mailmap --log-size --ancestry-path --max-parents= --min-parents= "
    "--no-min-parents --no-max-parents -L:"
)
GIT = Policy(
    options="--no-pager -P --no-optional-locks --literal-pathspecs --no-replace-objects",
    subcommands={
        "status": Policy(
            "-s --short -b --branch --show-stash --porcelain[=] --long -v --verbose "
            "-u:: --untracked-files[=] --ignore-submodules[=] --ignored[=] -z --column[=] "
            "--no-column --ahead-behind --no-ahead-behind --renames --no-renames "
            "--find-renames[=]"
        ),
        "diff": Policy(_DIFF + " --cached --staged --merge-base --no-index", numbers=True),
        "log": Policy(_LOG, numbers=True),
        "show": Policy(_LOG + " --show-notes[=]", numbers=True),
        "blame": Policy(
            "-b --root --show-stats -L: -l -t -S: --reverse= -p --porcelain --line-porcelain "
            "--incremental --encoding= --contents= --date= --progress --no-progress -M:: "
            "-C:: -c --score-debug -f --show-name -n --show-number -s -e --show-email -w "
            "--abbrev= --ignore-rev= --first-parent"
        ),
        "branch": Policy(
            "--list -l -a --all -r --remotes -v -vv --verbose --show-current "
            "--contains= --no-contains= --merged= --no-merged= --sort= --format= "
            "--points-at= --no-color --color[=] --column[=] --no-column -i --ignore-case "
            "--abbrev= --no-abbrev",
            positionals=0,
        ),
        "tag": Policy("-l --list -n:: --sort= --contains= --merged= --format=", positionals=0),
        "remote": Policy("-v --verbose", positionals=0),
        "rev-parse": Policy(
            "--show-toplevel --show-prefix --show-cdup --git-dir --absolute-git-dir "
            "--is-inside-work-tree --is-inside-git-dir --is-bare-repository --abbrev-ref[=] "
            "--short[=] --verify -q --quiet --symbolic --symbolic-full-name --all "
            "--branches[=] --tags[=] --remotes[=] --show-object-format[=] --default="
        ),
        "ls-files": Policy(
            "-c --cached -d --deleted -m --modified -o --others -i --ignored -s --stage -u "
            "--unmerged -k --killed --directory --no-empty-directory --eol -z -t -v -f "
            "--full-name --recurse-submodules --error-unmatch --exclude-standard -x: "
            "--exclude= --abbrev[=] --deduplicate --sparse --format="
        ),
        "ls-tree": Policy(
            "-d -r -t -l --long -z --name-only --name-status --object-only --full-name "
            "--full-tree --abbrev[=] --format="
        ),
        "grep": Policy(
            "--cached --no-index --untracked --no-exclude-standard --exclude-standard "
            "--recurse-submodules -a --text --no-textconv -i --ignore-case -I "
            "--max-depth= -r --recursive --no-recursive -w --word-regexp -v --invert-match "
            "-h -H --full-name -E --extended-regexp -G --basic-regexp -P --perl-regexp -F "
            "--fixed-strings -n --line-number --column -l --files-with-matches --name-only "
            "-L --files-without-match -z --null -o --only-matching -c --count --color[=] "
            "--no-color --break --heading -p --show-function -A: -B: -C: --after-context= "
            "--before-context= --context= -W --function-context -m: --max-count= -f: -e: "
            "--and --or --not --all-match -q --quiet",
            numbers=True,
        ),
        "describe": Policy(
            "--all --tags --contains --abbrev= --candidates= --exact-match --debug --long "
            "--match= --exclude= --always --first-parent --dirty[=] --broken[=]"
        ),
        "shortlog": Policy("-n --numbered -s --summary -e --email --format= -c --committer"),
        "cat-file": Policy("-t -s -e -p"),
        "count-objects": Policy("-v --verbose -H --human-readable", positionals=0),
        "merge-base": Policy("-a --all --octopus --independent --is-ancestor --fork-point"),
        "rev-list": Policy(
            "--count --all --max-count= -n: --since= --until= --reverse --first-parent "
            "--objects --no-merges --merges --left-right --topo-order",
            numbers=True,
        ),
        "reflog": Policy("-n: --max-count= --oneline --date= --format= --all", numbers=True),
        "stash": Policy("", positionals=1, check="git_stash"),
        "worktree": Policy("--porcelain -v --verbose -z", positionals=1, check="git_list"),
        "--version": Policy(positionals=0),
    },
)
_GREP = (
    "-E --extended-regexp -F --fixed-strings -G --basic-regexp -P --perl-regexp -e: "
    "--regexp= -f: --file= -i -y --ignore-case --no-ignore-case -v --invert-match -w "
    "--word-regexp -x --line-regexp -c --count --color[=] --colour[=] -L "
    "--files-without-match -l --files-with-matches -m: --max-count= -o --only-matching -q "
    "--quiet --silent -s --no-messages -b --byte-offset -H --with-filename -h "
    "--no-filename --label= -n --line-number -T --initial-tab -Z --null -A: "
    "--after-context= -B: --before-context= -C: --context= -a --text --binary-files= -I "
    "-D: --devices= -d: --directories= --exclude= --exclude-from= --exclude-dir= "
    "--include= -r --recursive -R --dereference-recursive --line-buffered -U --binary -z "
    "--null-data --no-group-separator --group-separator="
)
_RG = (
    "-e: --regexp= -f: --file= -i --ignore-case -S --smart-case -s --case-sensitive -F "
    "--fixed-strings -w --word-regexp -x --line-regexp -v --invert-match -c --count "
    "--count-matches -l --files-with-matches --files-without-match --files -o "
    "--only-matching -q --quiet -n --line-number -N --no-line-number --column "
    "--no-column -H --with-filename -I --no-filename --heading --no-heading --vimgrep "
    "--json --stats -A: --after-context= -B: --before-context= -C: --context= -m: "
    "--max-count= -g: --glob= --iglob= -t: --type= -T: --type-not= --type-list --hidden "
    "--no-hidden -u --unrestricted -uu -uuu -. --no-ignore --no-ignore-vcs "
    "--no-ignore-parent --no-ignore-dot --no-ignore-global --ignore-file= -L --follow "
    "-d: --max-depth= --max-filesize= -M: --max-columns= --max-columns-preview --trim "
    "--color= --colors= -p --pretty --sort= --sortr= -0 --null -j: --threads= -U "
    "--multiline --multiline-dotall -P --pcre2 --no-pcre2 --engine= -r: --replace= "
    "--passthru --byte-offset -b --no-config --no-messages --no-unicode --crlf "
    "--line-buffered --block-buffered -a --text --binary --no-binary --one-file-system "
    "--null-data --path-separator= --field-match-separator= --field-context-separator= "
    "--context-separator= --no-context-separator --include-zero --glob-case-insensitive "
    "--ignore-file-case-insensitive --debug --trace --version -V -h --help"
)
_LS = (
    "-a --all -A --almost-all --author -b --escape --block-size= -B --ignore-backups -c -C "
    "--color[=] -d --directory -D --dired -f -F --classify[=] --file-type --format= "
    "--full-time -g --group-directories-first -G --no-group -h --human-readable --si -H "
    "--dereference-command-line --dereference-command-line-symlink-to-dir --hide= "
    "--hyperlink[=] --indicator-style= -i --inode -I: --ignore= -k --kibibytes -l -L "
    "--dereference -m -n --numeric-uid-gid -N --literal -o -p -q --hide-control-chars "
    "--show-control-chars -Q --quote-name --quoting-style= -r --reverse -R --recursive "
    "-s --size -S --sort= --time= --time-style= -t -T: --tabsize= -u -U -v -w: --width= "
    "-x -X -Z --context -1 --zero"
)
PROGRAMS: dict[str, Policy] = {
    "ls": Policy(_LS),
    "cat": Policy(
        "-A --show-all -b --number-nonblank -e -E --show-ends -n --number -s "
        "--squeeze-blank -t -T --show-tabs -u -v --show-nonprinting"
    ),
    "head": Policy(
        "-c: --bytes= -n: --lines= -q --quiet --silent -v --verbose -z --zero-terminated",
        numbers=True,
    ),
    "tail": Policy(
        "-c: --bytes= -n: --lines= -q --quiet --silent -v --verbose -z --zero-terminated",
        numbers=True,
    ),
    "wc": Policy("-c --bytes -m --chars -l --lines -L --max-line-length -w --words"),
    "grep": Policy(_GREP, numbers=True),
    "rg": Policy(_RG, numbers=True),
    "find": Policy(
        "-H -L -P -O: -D: -print -print0 -printf: -ls -prune -quit -empty -true -false "
        "-not ! -a -and -o -or ( ) , -depth -d -mount -xdev -follow -noleaf -daystart "
        "-readable -writable -executable -nouser -nogroup -ignore_readdir_race "
        "-noignore_readdir_race -name: -iname: -path: -ipath: -wholename: -iwholename: "
        "-regex: -iregex: -regextype: -lname: -ilname: -type: -xtype: -maxdepth: "
        "-mindepth: -size: -mtime: -mmin: -atime: -amin: -ctime: -cmin: -newer: -anewer: "
        "-cnewer: -used: -perm: -user: -group: -uid: -gid: -links: -inum: -samefile: "
        "-fstype:",
        style="find",
    ),
    "sed": Policy(
        "-n --quiet --silent -E -r --regexp-extended --posix -s --separate -u --unbuffered "
        "-z --null-data -e: --expression= -l: --line-length= --debug --sandbox",
        check="sed",
    ),
    "sort": Policy(
        "-b --ignore-leading-blanks -d --dictionary-order -f --ignore-case -g "
        "--general-numeric-sort -i --ignore-nonprinting -M --month-sort -h "
        "--human-numeric-sort -n --numeric-sort -R --random-sort -r --reverse -V "
        "--version-sort -k: --key= -m --merge -s --stable -t: --field-separator= -u "
        "--unique -z --zero-terminated -c --check[=] -C -S: --buffer-size= --parallel= "
        "--debug"
    ),
    "uniq": Policy(
        "-c --count -d --repeated -D -f: --skip-fields= -i --ignore-case -s: "
        "--skip-chars= -u --unique -z --zero-terminated -w: --check-chars= --group[=] "
        "--all-repeated[=]",
        positionals=1,
    ),
    "cut": Policy(
        "-b: --bytes= -c: --characters= -d: --delimiter= -f: --fields= -n --complement -s "
        "--only-delimited --output-delimiter= -z --zero-terminated"
    ),
    "tr": Policy(
        "-c -C --complement -d --delete -s --squeeze-repeats -t --truncate-set1", positionals=2
    ),
    "nl": Policy("-b: -d: -f: -h: -i: -l: -n: -p -s: -v: -w:"),
    "tac": Policy("-b --before -r --regex -s: --separator="),
    "echo": Policy("-n -e -E"),
    "printf": Policy(""),
    "pwd": Policy("-L -P", positionals=0),
    "true": Policy(),
    "false": Policy(),
    "basename": Policy("-a --multiple -s: --suffix= -z --zero"),
    "dirname": Policy("-z --zero"),
    "realpath": Policy(
        "-e --canonicalize-existing -m --canonicalize-missing -L --logical -P --physical "
        "-q --quiet --relative-to= --relative-base= -s --strip --no-symlinks -z --zero"
    ),
    "stat": Policy(
        "-L --dereference -f --file-system -c: --format= --printf= -t --terse --cached="
    ),
    "du": Policy(
        "-0 --null -a --all --apparent-size -B: --block-size= -b --bytes -c --total -D "
        "--dereference-args -d: --max-depth= -H -h --human-readable --inodes -k -L "
        "--dereference -l --count-links -m -P --no-dereference -S --separate-dirs --si -s "
        "--summarize -t: --threshold= --time[=] --time-style= -x --one-file-system "
        "--exclude= -X: --exclude-from="
    ),
    "df": Policy(
        "-a --all -B: --block-size= -h --human-readable -H --si -i --inodes -k -l --local "
        "--output[=] -P --portability --total -t: --type= -T --print-type -x: "
        "--exclude-type="
    ),
    "diff": Policy(
        "-q --brief -s --report-identical-files -c -C: --context[=] -u -U: --unified[=] "
        "-e --ed -n --rcs -y --side-by-side -W: --width= --left-column "
        "--suppress-common-lines -p --show-c-function -F: --show-function-line= --label= "
        "--expand-tabs -t -T --initial-tab --tabsize= --suppress-blank-empty -r --recursive "
        "--no-dereference -N --new-file --unidirectional-new-file "
        "--ignore-file-name-case --no-ignore-file-name-case -x: --exclude= -X: "
        "--exclude-from= -S: --starting-file= -i --ignore-case -E --ignore-tab-expansion "
        "-Z --ignore-trailing-space -b --ignore-space-change -w --ignore-all-space -B "
        "--ignore-blank-lines -I: --ignore-matching-lines= -a --text --strip-trailing-cr "
        "-d --minimal --horizon-lines= --speed-large-files --color[=] --normal",
        positionals=2,
    ),
    "cmp": Policy("-b --print-bytes -i: --ignore-initial= -l --verbose -n: --bytes= -s"),
    "whoami": Policy(positionals=0),
    "id": Policy("-a -Z --context -g --group -G --groups -n --name -r --real -u --user -z"),
    "uname": Policy(
        "-a --all -s --kernel-name -n --nodename -r --kernel-release -v --kernel-version "
        "-m --machine -p --processor -i --hardware-platform -o --operating-system",
        positionals=0,
    ),
    "date": Policy(
        "-d: --date= -I:: --iso-8601[=] -R --rfc-email --rfc-3339= -r: --reference= -u "
        "--utc --universal --debug",
        check="date",
    ),
    "tree": Policy(
        "-a -d -l -f -x -L: -P: -I: --gitignore --ignore-case --matchdirs --prune "
        "--filelimit= --noreport -i -q -N -Q -p -u -g -s -h --si --du -D --timefmt= -F "
        "--inodes --device -v -t -c -U -r --dirsfirst --filesfirst --sort= -n -C -A -S "
        "--charset= -J -X"
    ),
}
"""Programs whose listed options only read: `smart_approve` runs these without asking."""

NEUTRAL = frozenset({"cd", "pwd", "true", "false", "echo"})
"""Builtins an allow rule need not name (they read nothing and run nothing)."""

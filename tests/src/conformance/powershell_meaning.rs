//! What the test-VM scripts (`tests/windows/*.ps1`) mean, checked on their tree-sitter parse
//! trees, beyond their syntax (`conformance::powershell`). Each rule is a function that returns
//! its findings for a set of scripts, run on the real scripts (no finding allowed) and on a bad
//! snippet (the finding it must make), so that a rule that cannot fail is seen to fail:
//!
//! - a script block handed to a function of the scripts reads no variable that the function's
//!   own parameters or locals shadow (`& $Action` runs the block in a child scope of the
//!   function, and PowerShell names ignore case);
//! - native tools run only through `Invoke-DcbndkNative`, with success codes the tool documents
//!   (`tests/windows/native-tools.tsv`);
//! - a call into another module that can throw sits in a `try` with a `catch` where the script
//!   means to go on past its errors (a terminating error ignores `-ErrorAction`);
//! - a path handed to a .NET API is resolved first (.NET resolves a relative path against the
//!   process's directory, PowerShell's cmdlets against `$PWD`);
//! - no PowerShell 7 syntax in these Windows PowerShell 5.1 scripts;
//! - every cmdlet called is in `tests/windows/cmdlets.tsv` (module, parameters, from
//!   Microsoft's documentation) with every parameter it is given, and every function of the
//!   scripts is called with parameters it declares;
//! - an array a function returns whole (`return , @(...)`) is not piped on as one object or
//!   wrapped into one element by `@(...)`.

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::{Node, Tree};

use super::powershell::{parse, scripts, windows_dir};

/// One script: its file name, text and parse tree.
struct Script {
    name: String,
    source: String,
    tree: Tree,
}

impl Script {
    fn new(name: &str, source: &str) -> Self {
        Self {
            name: name.to_string(),
            source: source.to_string(),
            tree: parse(source),
        }
    }

    fn text(&self, node: Node<'_>) -> &str {
        self.source.get(node.byte_range()).unwrap_or_default()
    }

    fn at(&self, node: Node<'_>) -> String {
        format!("{}:{}", self.name, node.start_position().row + 1)
    }
}

fn real_scripts() -> Vec<Script> {
    scripts()
        .iter()
        .map(|p| {
            let source =
                std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let name = p
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            Script::new(&name, &source)
        })
        .collect()
}

/// Every node under `node`, `node` first, in document order.
fn descendants(node: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        out.push(n);
        let mut cursor = n.walk();
        let children: Vec<Node<'_>> = n.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    out
}

fn ancestors(node: Node<'_>) -> impl Iterator<Item = Node<'_>> {
    std::iter::successors(node.parent(), Node::parent)
}

/// The name of a variable node, without `$`/`@`, braces or a scope qualifier, lower case, and
/// whether it had a qualifier (`$script:x`, `$env:x`): those do not resolve through scopes.
fn variable_name(text: &str) -> (String, bool) {
    let t = text.trim_start_matches(['$', '@']);
    let t = t.trim_start_matches('{').trim_end_matches('}');
    match t.split_once(':') {
        Some((scope, name)) => {
            let qualified = !scope.eq_ignore_ascii_case("local");
            (name.to_ascii_lowercase(), qualified)
        }
        None => (t.to_ascii_lowercase(), false),
    }
}

/// A command of a script: its name (`None` for `& <expression>`), its parameters (name lower
/// case without `-` or `:`, node of the parameter, node of its value if one follows), its
/// positional arguments and its splatted variables.
struct Command<'t> {
    node: Node<'t>,
    name: Option<String>,
    invoked: Option<Node<'t>>,
    parameters: Vec<(String, Node<'t>, Option<Node<'t>>)>,
    positional: Vec<Node<'t>>,
    splats: Vec<(String, Node<'t>)>,
}

fn command<'t>(script: &Script, node: Node<'t>) -> Command<'t> {
    let mut name = None;
    let mut invoked = None;
    if let Some(n) = node.child_by_field_name("command_name") {
        if n.kind() == "command_name" {
            name = Some(script.text(n).to_string());
        } else {
            invoked = Some(n);
        }
    }
    let mut elements = Vec::new();
    if let Some(e) = node.child_by_field_name("command_elements") {
        let mut cursor = e.walk();
        elements = e
            .named_children(&mut cursor)
            .filter(|c| c.kind() != "command_argument_sep")
            .collect();
    }
    let mut parameters = Vec::new();
    let mut positional = Vec::new();
    let mut splats = Vec::new();
    let mut i = 0;
    while i < elements.len() {
        let e = elements[i];
        let text = script.text(e);
        if e.kind() == "command_parameter" {
            let p = text
                .trim_start_matches('-')
                .trim_end_matches(':')
                .to_ascii_lowercase();
            // `-Name value`: the next element is the value unless it is a parameter too. A
            // switch followed by a positional argument reads as a value here; the checks below
            // only need the parameter names and the values of valued parameters.
            let value = elements
                .get(i + 1)
                .filter(|n| n.kind() != "command_parameter");
            if value.is_some() {
                i += 1;
            }
            parameters.push((p, e, value.copied()));
        } else if text.starts_with('@') && !text.starts_with("@(") && !text.starts_with("@{") {
            splats.push((variable_name(text).0, e));
        } else {
            positional.push(e);
        }
        i += 1;
    }
    Command {
        node,
        name,
        invoked,
        parameters,
        positional,
        splats,
    }
}

fn commands<'t>(script: &'t Script) -> Vec<Command<'t>> {
    descendants(script.tree.root_node())
        .into_iter()
        .filter(|n| n.kind() == "command")
        .map(|n| command(script, n))
        .collect()
}

/// The script block node a command argument is, if it is one (`{ ... }` as an argument).
fn as_script_block(node: Node<'_>) -> Option<Node<'_>> {
    descendants(node)
        .into_iter()
        .take(3)
        .find(|n| n.kind() == "script_block_expression")
}

/// The variable assigned by an assignment expression (`$x = ...`, `$x += ...`), if its left
/// side is a plain variable.
fn assigned_variable<'t>(script: &Script, assignment: Node<'t>) -> Option<(Node<'t>, String)> {
    let left = assignment.child(0)?;
    let vars: Vec<Node<'t>> = descendants(left)
        .into_iter()
        .filter(|n| n.kind() == "variable")
        .collect();
    let only = *vars.first()?;
    // `$x['k'] = ...` and `$x.y = ...` change an object, they assign no variable.
    if script.text(left).trim() != script.text(only).trim() {
        return None;
    }
    Some((only, variable_name(script.text(only)).0))
}

/// A function of the scripts: its parameters and the variables its body assigns, lower case.
struct Function<'t> {
    node: Node<'t>,
    parameters: BTreeSet<String>,
    locals: BTreeSet<String>,
    takes_script_block: bool,
}

fn functions(scripts: &[Script]) -> BTreeMap<String, (usize, Function<'_>)> {
    let mut out = BTreeMap::new();
    for (index, script) in scripts.iter().enumerate() {
        for node in descendants(script.tree.root_node()) {
            if node.kind() != "function_statement" {
                continue;
            }
            let Some(name) = node
                .named_children(&mut node.walk())
                .find(|c| c.kind() == "function_name")
            else {
                continue;
            };
            let mut f = Function {
                node,
                parameters: BTreeSet::new(),
                locals: BTreeSet::new(),
                takes_script_block: false,
            };
            for n in descendants(node) {
                match n.kind() {
                    "script_parameter" => {
                        if ancestors(n).find(|a| a.kind() == "function_statement") != Some(node) {
                            continue;
                        }
                        if let Some(v) = n
                            .named_children(&mut n.walk())
                            .find(|c| c.kind() == "variable")
                        {
                            f.parameters.insert(variable_name(script.text(v)).0);
                        }
                        if script
                            .text(n)
                            .to_ascii_lowercase()
                            .contains("[scriptblock]")
                        {
                            f.takes_script_block = true;
                        }
                    }
                    "assignment_expression" => {
                        if let Some((_, v)) = assigned_variable(script, n) {
                            f.locals.insert(v);
                        }
                    }
                    "foreach_statement" => {
                        if let Some(v) = n
                            .named_children(&mut n.walk())
                            .find(|c| c.kind() == "variable")
                        {
                            f.locals.insert(variable_name(script.text(v)).0);
                        }
                    }
                    _ => {}
                }
            }
            out.insert(script.text(name).to_ascii_lowercase(), (index, f));
        }
    }
    out
}

/// Automatic variables a script block gets in its own scope (so no function shadows them), and
/// the constants.
const OWN_AUTOMATIC: &[&str] = &[
    "_",
    "psitem",
    "args",
    "input",
    "this",
    "true",
    "false",
    "null",
    "matches",
    "lastexitcode",
    "error",
    "pscmdlet",
    "myinvocation",
    "psboundparameters",
];

// ---- Rule: a script block does not read a variable the called function shadows --------------

/// `(where, variable, function)` for each script block handed to a function of the scripts that
/// reads (before assigning it) a variable the function's own parameters or locals shadow.
fn shadowed_reads(scripts: &[Script]) -> Vec<String> {
    let functions = functions(scripts);
    let mut out = Vec::new();
    for script in scripts {
        for c in commands(script) {
            let Some(name) = &c.name else { continue };
            let Some((_, f)) = functions.get(&name.to_ascii_lowercase()) else {
                continue;
            };
            if !f.takes_script_block {
                continue;
            }
            let arguments = c
                .positional
                .iter()
                .chain(c.parameters.iter().filter_map(|(_, _, v)| v.as_ref()));
            for block in arguments.filter_map(|a| as_script_block(*a)) {
                let mut assigned = BTreeSet::new();
                for n in descendants(block) {
                    if n.kind() == "assignment_expression"
                        && let Some((_, v)) = assigned_variable(script, n)
                    {
                        // `$x = ...` makes $x the block's own from here on, unless its right
                        // side reads $x first (`$x = $x + 1` reads the shadowing one). The
                        // walk meets the assignment before its left side's variable node,
                        // which is then skipped as assigned, or reported as a read.
                        let right_reads = descendants(n).into_iter().skip(1).any(|r| {
                            r.kind() == "variable"
                                && r.start_byte() > n.child(0).map_or(0, |l| l.end_byte())
                                && variable_name(script.text(r)).0 == v
                        });
                        if !right_reads {
                            assigned.insert(v);
                        }
                        continue;
                    }
                    if n.kind() != "variable" {
                        continue;
                    }
                    let (v, qualified) = variable_name(script.text(n));
                    if qualified || assigned.contains(&v) || OWN_AUTOMATIC.contains(&v.as_str()) {
                        continue;
                    }
                    if f.parameters.contains(&v) || f.locals.contains(&v) {
                        out.push(format!(
                            "{}: {} in the script block given to {name} is {name}'s own ${v}",
                            script.at(n),
                            script.text(n)
                        ));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn a_script_block_reads_no_variable_the_called_function_shadows() {
    let found = shadowed_reads(&real_scripts());
    assert!(
        found.is_empty(),
        "shadowed variables:\n  {}",
        found.join("\n  ")
    );

    let step = "function Invoke-DcbndkStep {\n    param([Parameter(Mandatory)] [string] $Name,\n        \
                [Parameter(Mandatory)] [scriptblock] $Action)\n    Write-Host \"==> $Name\"\n    & $Action\n}\n";
    // The defect this rule was written for: the adapter's name in $name, read in a step.
    let bad = Script::new(
        "bad.ps1",
        &format!(
            "{step}$name = $adapter.Name\nInvoke-DcbndkStep \"Set it on '$name'\" {{\n    \
             Set-NetAdapterAdvancedProperty -Name $NAME -RegistryKeyword VlanID -RegistryValue 5\n}}\n"
        ),
    );
    let found = shadowed_reads(std::slice::from_ref(&bad));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("bad.ps1:9: $NAME"), "{found:?}");
    // Renamed, assigned in the block before it is read, or qualified: nothing shadows it.
    let good = Script::new(
        "good.ps1",
        &format!(
            "{step}$adapterName = $adapter.Name\nInvoke-DcbndkStep 'a' {{ Get-NetAdapter -Name $adapterName }}\n\
             Invoke-DcbndkStep 'b' {{ $name = 'x'; Write-Host $name }}\nInvoke-DcbndkStep 'c' {{ $script:name }}\n"
        ),
    );
    assert_eq!(
        shadowed_reads(std::slice::from_ref(&good)),
        Vec::<String>::new()
    );
}

// ---- Tables kept from the documentation ------------------------------------------------------

/// The rows of a tab-separated table of `tests/windows`, header and `#` lines skipped.
fn table(name: &str) -> Vec<Vec<String>> {
    let path = windows_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .skip(1)
        .map(|l| l.split('\t').map(|c| c.trim().to_string()).collect())
        .collect()
}

/// `native-tools.tsv`: tool (lower case) -> the exit codes its documentation gives for success.
fn native_tools() -> BTreeMap<String, BTreeSet<i64>> {
    table("native-tools.tsv")
        .into_iter()
        .map(|row| {
            assert!(
                row.len() >= 4,
                "native-tools.tsv: a row needs 4 columns: {row:?}"
            );
            let codes = row[1]
                .split(',')
                .map(|c| {
                    c.trim()
                        .parse()
                        .unwrap_or_else(|_| panic!("native-tools.tsv: {} is no exit code", row[1]))
                })
                .collect();
            (row[0].to_ascii_lowercase(), codes)
        })
        .collect()
}

/// The scripts' functions that return the path of a native tool, and which tool.
const TOOL_LOCATORS: &[(&str, &str)] = &[("find-dcbndkdevgen", "devgen.exe")];

// ---- Rule: native tools run through Invoke-DcbndkNative with documented codes -----------------

fn integers(script: &Script, node: Node<'_>) -> Option<Vec<i64>> {
    let numbers: Vec<i64> = descendants(node)
        .into_iter()
        .filter(|n| n.kind() == "decimal_integer_literal")
        .filter_map(|n| script.text(n).parse().ok())
        .collect();
    let digits: String = script
        .text(node)
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    // Every digit of the value is in a literal: no variable or expression makes the codes.
    let literal_digits: String = numbers.iter().map(ToString::to_string).collect();
    (digits == literal_digits && !numbers.is_empty()).then_some(numbers)
}

/// The native tool a command or a `-FilePath` value names, if any: `pnputil.exe`, `'netstat'`,
/// or a variable assigned from a tool locator (`$devgen = Find-DcbndkDevGen ...`).
fn native_tool(
    script: &Script,
    node: Node<'_>,
    tools: &BTreeMap<String, BTreeSet<i64>>,
) -> Option<String> {
    let text = script
        .text(node)
        .trim()
        .trim_matches(['\'', '"'])
        .to_ascii_lowercase();
    if text.starts_with('$') {
        let (v, _) = variable_name(&text);
        for n in descendants(script.tree.root_node()) {
            if n.kind() == "assignment_expression"
                && let Some((_, assigned)) = assigned_variable(script, n)
                && assigned == v
            {
                let right = script.text(n).to_ascii_lowercase();
                if let Some((_, tool)) = TOOL_LOCATORS.iter().find(|(f, _)| right.contains(f)) {
                    return Some((*tool).to_string());
                }
            }
        }
        return None;
    }
    let exe = if text.ends_with(".exe") {
        text
    } else {
        format!("{text}.exe")
    };
    (tools.contains_key(&exe) || script.text(node).to_ascii_lowercase().contains(".exe"))
        .then_some(exe)
}

fn native_exit_codes(scripts: &[Script], tools: &BTreeMap<String, BTreeSet<i64>>) -> Vec<String> {
    let mut out = Vec::new();
    for script in scripts {
        for c in commands(script) {
            let in_runner = ancestors(c.node).any(|a| {
                a.kind() == "function_statement"
                    && script
                        .text(a)
                        .to_ascii_lowercase()
                        .starts_with("function invoke-dcbndknative")
            });
            let called = c
                .name
                .as_ref()
                .map_or(c.invoked, |_| c.node.child_by_field_name("command_name"));
            if let Some(called) = called
                && let Some(tool) = native_tool(script, called, tools)
                && !in_runner
            {
                out.push(format!(
                    "{}: {tool} run directly: run it with Invoke-DcbndkNative, which checks its exit code",
                    script.at(c.node)
                ));
            }
            if !c
                .name
                .as_ref()
                .is_some_and(|n| n.eq_ignore_ascii_case("Invoke-DcbndkNative"))
            {
                continue;
            }
            let value = |p: &str| {
                c.parameters
                    .iter()
                    .find(|(n, _, _)| n == p)
                    .and_then(|(_, _, v)| *v)
            };
            let Some(file) = value("filepath").or_else(|| c.positional.first().copied()) else {
                out.push(format!(
                    "{}: Invoke-DcbndkNative without -FilePath",
                    script.at(c.node)
                ));
                continue;
            };
            let Some(tool) = native_tool(script, file, tools) else {
                out.push(format!(
                    "{}: Invoke-DcbndkNative -FilePath {}: not a tool of native-tools.tsv",
                    script.at(c.node),
                    script.text(file)
                ));
                continue;
            };
            let Some(documented) = tools.get(&tool) else {
                out.push(format!(
                    "{}: {tool} is not in native-tools.tsv (its documented exit codes)",
                    script.at(c.node)
                ));
                continue;
            };
            let codes = match value("successcode") {
                None => vec![0],
                Some(v) => match integers(script, v) {
                    Some(codes) => codes,
                    None => {
                        out.push(format!(
                            "{}: -SuccessCode {} is not a list of literal exit codes",
                            script.at(c.node),
                            script.text(v)
                        ));
                        continue;
                    }
                },
            };
            for code in codes {
                if !documented.contains(&code) {
                    out.push(format!(
                        "{}: {tool} exit code {code} taken as success; its documented success codes are {documented:?}",
                        script.at(c.node)
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn every_native_tool_has_its_exit_code_checked_against_its_documented_codes() {
    let tools = native_tools();
    let found = native_exit_codes(&real_scripts(), &tools);
    assert!(found.is_empty(), "native tools:\n  {}", found.join("\n  "));

    let bad = Script::new(
        "bad.ps1",
        "pnputil.exe /add-driver x.inf /install\n\
         $r = Invoke-DcbndkNative -FilePath 'pnputil.exe' -ArgumentList @('/enum-drivers') -SuccessCode @(0, 5)\n\
         $devgen = Find-DcbndkDevGen -DevGenPath $p\n& $devgen /add /bus ROOT\n\
         $r = Invoke-DcbndkNative -FilePath 'sc.exe' -ArgumentList @('query')\n\
         $r = Invoke-DcbndkNative -FilePath $devgen -ArgumentList @('/add') -SuccessCode $codes\n",
    );
    let found = native_exit_codes(std::slice::from_ref(&bad), &tools);
    let lines: Vec<&str> = found
        .iter()
        .map(|f| f.split(": ").next().unwrap_or(""))
        .collect();
    assert_eq!(
        lines,
        [
            "bad.ps1:1",
            "bad.ps1:2",
            "bad.ps1:4",
            "bad.ps1:5",
            "bad.ps1:6"
        ],
        "{found:?}"
    );
    assert!(found[1].contains("exit code 5"), "{found:?}");
    let good = Script::new(
        "good.ps1",
        "$r = Invoke-DcbndkNative -FilePath 'pnputil.exe' -ArgumentList @('/add-driver', $inf, '/install') -SuccessCode @(0, 259, 3010)\n\
         $devgen = Find-DcbndkDevGen -DevGenPath $p\n$r = Invoke-DcbndkNative -FilePath $devgen -ArgumentList @('/remove', $id)\n",
    );
    assert_eq!(
        native_exit_codes(std::slice::from_ref(&good), &tools),
        Vec::<String>::new()
    );
}

// ---- Rule: a call that can throw is caught where the script means to go on ---------------------

/// Calls into other modules that end in a terminating error when they fail (a `throw` in a
/// script module, `ThrowTerminatingError` in a cmdlet), which `-ErrorAction` does not turn
/// into a non-terminating one.
const THROWING: &[&str] = &[
    "test-netstack",
    "install-windowsfeature",
    "uninstall-windowsfeature",
    "enable-windowsoptionalfeature",
    "disable-windowsoptionalfeature",
    "import-module",
    "install-module",
    "uninstall-module",
    "install-packageprovider",
    "add-type",
];

/// Whether the command says it means to go on past errors: `-ErrorAction` other than `Stop`,
/// or a `$ErrorActionPreference` other than `'Stop'` set in its function or script block.
fn goes_on(script: &Script, c: &Command<'_>) -> bool {
    let lenient = |t: &str| {
        let t = t.trim().trim_matches(['\'', '"']).to_ascii_lowercase();
        matches!(t.as_str(), "continue" | "silentlycontinue" | "ignore")
    };
    if c.parameters
        .iter()
        .any(|(p, _, v)| p == "erroraction" && v.is_some_and(|v| lenient(script.text(v))))
    {
        return true;
    }
    let scope = ancestors(c.node)
        .find(|a| matches!(a.kind(), "function_statement" | "script_block_expression"))
        .unwrap_or_else(|| script.tree.root_node());
    descendants(scope).into_iter().any(|n| {
        n.kind() == "assignment_expression"
            && assigned_variable(script, n).is_some_and(|(_, v)| v == "erroractionpreference")
            && n.child_by_field_name("value")
                .is_some_and(|v| lenient(script.text(v)))
    })
}

fn uncaught_throws(scripts: &[Script]) -> Vec<String> {
    let mut out = Vec::new();
    for script in scripts {
        for c in commands(script) {
            let Some(name) = &c.name else { continue };
            if !THROWING.contains(&name.to_ascii_lowercase().as_str()) || !goes_on(script, &c) {
                continue;
            }
            let scope = ancestors(c.node)
                .find(|a| matches!(a.kind(), "function_statement" | "script_block_expression"));
            let caught = ancestors(c.node)
                .take_while(|a| Some(*a) != scope)
                .any(|a| {
                    a.kind() == "try_statement"
                        && a.named_children(&mut a.walk())
                            .any(|k| k.kind() == "catch_clauses")
                });
            if !caught {
                out.push(format!(
                    "{}: {name} can throw, which -ErrorAction does not stop, and the script means to go on: put it in a try with a catch",
                    script.at(c.node)
                ));
            }
        }
    }
    out
}

#[test]
fn a_call_that_can_throw_is_caught_where_the_script_goes_on() {
    let found = uncaught_throws(&real_scripts());
    assert!(
        found.is_empty(),
        "uncaught throws:\n  {}",
        found.join("\n  ")
    );

    // The defect this rule was written for: try/finally, no catch, around Test-NetStack.
    let bad = Script::new(
        "bad.ps1",
        "function Invoke-Run {\n    $previous = $ErrorActionPreference\n    $ErrorActionPreference = 'Continue'\n    \
         try {\n        $output = @(Test-NetStack @Arguments -ErrorAction Continue -ErrorVariable e)\n    }\n    \
         finally {\n        $ErrorActionPreference = $previous\n    }\n}\n\
         Import-Module -Name X -ErrorAction SilentlyContinue\n",
    );
    let found = uncaught_throws(std::slice::from_ref(&bad));
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].starts_with("bad.ps1:5: Test-NetStack"),
        "{found:?}"
    );
    assert!(
        found[1].starts_with("bad.ps1:11: Import-Module"),
        "{found:?}"
    );
    // Caught, or meant to stop the script (the step reports it): no finding.
    let good = Script::new(
        "good.ps1",
        "function Invoke-Run {\n    try {\n        Test-NetStack @Arguments -ErrorAction Continue\n    }\n    \
         catch {\n        $thrown = $_\n    }\n}\nImport-Module -Name X\n",
    );
    assert_eq!(
        uncaught_throws(std::slice::from_ref(&good)),
        Vec::<String>::new()
    );
}

// ---- Rule: paths handed to .NET are resolved first --------------------------------------------

/// .NET types whose constructor's first argument is a file path.
const NET_PATH_TYPES: &[&str] = &[
    "x509certificate2",
    "x509certificate",
    "filestream",
    "streamreader",
    "streamwriter",
    "fileinfo",
    "directoryinfo",
];
/// .NET static classes whose methods take a path first.
const NET_PATH_CLASSES: &[&str] = &[
    "system.io.file",
    "io.file",
    "system.io.directory",
    "io.directory",
];

/// Whether an expression is a resolved (absolute, provider) path: `Resolve-Path`, `Convert-Path`
/// or `GetUnresolvedProviderPathFromPSPath` of something, an environment folder, `$PSScriptRoot`,
/// `[Environment]::GetFolderPath(...)`, or a `Join-Path` onto one of those or onto a resolved
/// variable.
fn resolved(text: &str, known: &BTreeSet<String>) -> bool {
    let t = text.trim().to_ascii_lowercase();
    let t = t.trim_start_matches('(').trim_end_matches(')').trim();
    if [
        "resolve-path",
        "convert-path",
        "getunresolvedproviderpathfrompspath",
    ]
    .iter()
    .any(|f| t.contains(f))
    {
        return true;
    }
    let root = |r: &str| {
        let r = r.trim().trim_start_matches('(').trim();
        r.starts_with("$env:")
            || r.starts_with("$psscriptroot")
            || r.starts_with("[environment]::getfolderpath")
            || r.starts_with('$')
                && known.contains(&variable_name(r.split_whitespace().next().unwrap_or("")).0)
    };
    if let Some(rest) = t.strip_prefix("join-path") {
        let rest = rest.trim_start();
        let rest = rest.strip_prefix("-path").unwrap_or(rest);
        return root(rest);
    }
    t.starts_with('$') && root(t)
}

fn unresolved_net_paths(scripts: &[Script]) -> Vec<String> {
    let common: Vec<&Script> = scripts
        .iter()
        .filter(|s| {
            s.name.eq_ignore_ascii_case("DcbndkCommon.ps1")
                || s.name.eq_ignore_ascii_case("DcbndkRdmaCommon.ps1")
        })
        .collect();
    let mut out = Vec::new();
    for script in scripts {
        // Every assignment of this script and the helpers' script-level ones; a variable is
        // resolved when every assignment of it is (a fixed point: Join-Path onto a resolved one).
        let mut assignments: Vec<(String, String)> = Vec::new();
        for s in std::iter::once(script).chain(common.iter().copied()) {
            for n in descendants(s.tree.root_node()) {
                if n.kind() == "assignment_expression"
                    && let Some((_, v)) = assigned_variable(s, n)
                    && let Some(value) = n.child_by_field_name("value")
                    && (std::ptr::eq(s, script)
                        || !ancestors(n).any(|a| a.kind() == "function_statement"))
                {
                    assignments.push((v, s.text(value).to_string()));
                }
            }
        }
        let mut known: BTreeSet<String> = BTreeSet::new();
        loop {
            let names: BTreeSet<&String> = assignments.iter().map(|(v, _)| v).collect();
            let next: BTreeSet<String> = names
                .into_iter()
                .filter(|v| {
                    assignments
                        .iter()
                        .filter(|(a, _)| a == *v)
                        .all(|(_, value)| resolved(value, &known))
                })
                .cloned()
                .collect();
            if next == known {
                break;
            }
            known = next;
        }
        let mut check = |arg: Node<'_>, what: &str, at: Node<'_>| {
            let text = script.text(arg);
            if !resolved(text, &known) {
                out.push(format!(
                    "{}: {text} is handed to {what} unresolved: .NET resolves a relative path against the process's directory, not $PWD (Resolve-Path it first)",
                    script.at(at)
                ));
            }
        };
        for c in commands(script) {
            let Some(name) = &c.name else { continue };
            if !name.eq_ignore_ascii_case("New-Object") {
                continue;
            }
            let type_name = c
                .parameters
                .iter()
                .find(|(p, _, _)| p == "typename")
                .and_then(|(_, _, v)| *v)
                .or_else(|| c.positional.first().copied());
            let Some(type_name) = type_name else { continue };
            let t = script.text(type_name).to_ascii_lowercase();
            if !NET_PATH_TYPES.iter().any(|n| t.ends_with(n)) {
                continue;
            }
            let argument = c
                .parameters
                .iter()
                .find(|(p, _, _)| p == "argumentlist")
                .and_then(|(_, _, v)| *v)
                .or_else(|| c.positional.get(1).copied());
            if let Some(argument) = argument {
                let first = argument
                    .named_children(&mut argument.walk())
                    .next()
                    .filter(|_| {
                        argument.kind() == "array_literal_expression"
                            && script.text(argument).contains(',')
                    })
                    .unwrap_or(argument);
                check(first, script.text(type_name), c.node);
            }
        }
        for n in descendants(script.tree.root_node()) {
            if n.kind() != "invokation_expression" {
                continue;
            }
            let Some(target) = n.child(0) else { continue };
            let t = script.text(target).to_ascii_lowercase();
            let t = t.trim_start_matches('[').trim_end_matches(']');
            let is_path_api = target.kind() == "type_literal"
                && (NET_PATH_CLASSES.contains(&t)
                    || NET_PATH_TYPES.iter().any(|p| t.ends_with(p))
                        && script.text(n).to_ascii_lowercase().contains("::new("));
            if !is_path_api {
                continue;
            }
            let first = descendants(n)
                .into_iter()
                .find(|a| a.kind() == "argument_expression");
            if let Some(first) = first {
                check(first, script.text(target), n);
            }
        }
    }
    out
}

#[test]
fn a_path_handed_to_dotnet_is_resolved_first() {
    let found = unresolved_net_paths(&real_scripts());
    assert!(
        found.is_empty(),
        "unresolved paths:\n  {}",
        found.join("\n  ")
    );

    // The defect this rule was written for: -CertificatePath as given, to X509Certificate2.
    let bad = Script::new(
        "bad.ps1",
        "param([string] $CertificatePath)\n$cer = $CertificatePath\n\
         $certificate = New-Object System.Security.Cryptography.X509Certificates.X509Certificate2 -ArgumentList $cer\n\
         $stream = [System.IO.File]::Create('out.bin')\n",
    );
    let found = unresolved_net_paths(std::slice::from_ref(&bad));
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].starts_with("bad.ps1:3: $cer"), "{found:?}");
    assert!(found[1].starts_with("bad.ps1:4: 'out.bin'"), "{found:?}");
    let good = Script::new(
        "good.ps1",
        "param([string] $CertificatePath)\n$cer = (Resolve-Path -LiteralPath $CertificatePath).ProviderPath\n\
         $certificate = New-Object System.Security.Cryptography.X509Certificates.X509Certificate2 -ArgumentList $cer\n\
         $dir = Join-Path $env:ProgramData 'x'\n$path = Join-Path $dir 'out.bin'\n$stream = [System.IO.File]::Create($path)\n",
    );
    assert_eq!(
        unresolved_net_paths(std::slice::from_ref(&good)),
        Vec::<String>::new()
    );
}

// ---- Rule: no PowerShell 7 syntax -----------------------------------------------------------

fn powershell7_syntax(scripts: &[Script]) -> Vec<String> {
    let mut out = Vec::new();
    for script in scripts {
        for n in descendants(script.tree.root_node()) {
            match n.kind() {
                "pipeline_chain_tail" => out.push(format!(
                    "{}: pipeline chain operator {} (PowerShell 7)",
                    script.at(n),
                    script.text(n)
                )),
                // The grammar knows no ?? ?. ?[ or ternary: they parse as an unexpected '?'.
                "ERROR" if script.text(n).contains('?') => out.push(format!(
                    "{}: '?' operator (??, ?., ?[] or a ternary: PowerShell 7) in {:?}",
                    script.at(n),
                    script.text(n)
                )),
                "variable" => {
                    let (v, _) = variable_name(script.text(n));
                    if matches!(
                        v.as_str(),
                        "iswindows" | "islinux" | "ismacos" | "iscoreclr"
                    ) {
                        out.push(format!("{}: ${v} (PowerShell 6 and later)", script.at(n)));
                    }
                }
                _ => {}
            }
        }
        for c in commands(script) {
            let Some(name) = c.name.as_deref().map(str::to_ascii_lowercase) else {
                continue;
            };
            let has = |p: &str| c.parameters.iter().any(|(n, _, _)| n == p);
            match name.as_str() {
                "join-path" => {
                    let named = usize::from(has("path")) + usize::from(has("childpath"));
                    if has("additionalchildpath") || c.positional.len() + named > 2 {
                        out.push(format!(
                            "{}: Join-Path with more than one child path (PowerShell 6 and later)",
                            script.at(c.node)
                        ));
                    }
                }
                "convertfrom-json" if has("ashashtable") || has("depth") || has("noenumerate") => {
                    out.push(format!(
                        "{}: ConvertFrom-Json -AsHashtable/-Depth/-NoEnumerate (PowerShell 6 and later)",
                        script.at(c.node)
                    ));
                }
                "foreach-object" if has("parallel") => out.push(format!(
                    "{}: ForEach-Object -Parallel (PowerShell 7)",
                    script.at(c.node)
                )),
                "get-content" | "set-content" | "add-content" if has("asbytestream") => {
                    out.push(format!(
                        "{}: -AsByteStream (PowerShell 6 and later)",
                        script.at(c.node)
                    ));
                }
                _ => {}
            }
        }
    }
    out
}

#[test]
fn no_powershell7_syntax_in_the_51_scripts() {
    let found = powershell7_syntax(&real_scripts());
    assert!(
        found.is_empty(),
        "PowerShell 7 syntax:\n  {}",
        found.join("\n  ")
    );

    let bad = Script::new(
        "bad.ps1",
        "$a = $b ?? 'x'\n$c = $d?.Name\n$e = $f ? 1 : 2\nStart-Thing && Stop-Thing\nA || B\n\
         $p = Join-Path $env:ProgramData 'a' 'b'\n$h = Get-Content x | ConvertFrom-Json -AsHashtable\n\
         $j = $t | ConvertFrom-Json -Depth 3\nif ($IsWindows) { }\n",
    );
    let found = powershell7_syntax(std::slice::from_ref(&bad));
    // One finding (at least) on each of the nine lines, each line one PowerShell 7 form.
    let lines: BTreeSet<String> = found
        .iter()
        .map(|f| f.split(": ").next().unwrap_or("").to_string())
        .collect();
    let expected: BTreeSet<String> = (1..=9).map(|l| format!("bad.ps1:{l}")).collect();
    assert_eq!(lines, expected, "{found:?}");
    let good = Script::new(
        "good.ps1",
        "$a = if ($null -ne $b) { $b } else { 'x' }\n$p = Join-Path (Join-Path $env:ProgramData 'a') 'b'\n\
         $j = Get-Content x -Raw | ConvertFrom-Json\n$q = @($list | ? { $_ })\n$s = $t | ConvertTo-Json -Depth 4\n",
    );
    assert_eq!(
        powershell7_syntax(std::slice::from_ref(&good)),
        Vec::<String>::new()
    );
}

// ---- Rule: every cmdlet and parameter is in the table kept from the documentation -------------

/// Common parameters: every cmdlet and advanced function takes them (about_CommonParameters).
const COMMON: &[&str] = &[
    "verbose",
    "debug",
    "erroraction",
    "warningaction",
    "informationaction",
    "errorvariable",
    "warningvariable",
    "informationvariable",
    "outvariable",
    "outbuffer",
    "pipelinevariable",
];

/// `cmdlets.tsv`: cmdlet (lower case) -> its parameters (lower case).
fn cmdlet_table() -> BTreeMap<String, BTreeSet<String>> {
    table("cmdlets.tsv")
        .into_iter()
        .map(|row| {
            assert!(
                row.len() >= 4,
                "cmdlets.tsv: a row needs 4 columns: {row:?}"
            );
            let parameters = row[2]
                .split(',')
                .map(|p| p.trim().to_ascii_lowercase())
                .filter(|p| !p.is_empty())
                .collect();
            (row[0].to_ascii_lowercase(), parameters)
        })
        .collect()
}

/// The keys a splatted hashtable `$variable` can hold where `at` uses it: the keys of the
/// `@{...}` literals assigned to it and the literal `['Key']` / `.Key` it is given, in the
/// enclosing function or script block; for a parameter of the enclosing function, those of
/// what its callers pass. `Err` names a key the check cannot read (`$h[$name] = ...`).
fn splat_keys(
    scripts: &[Script],
    script: &Script,
    variable: &str,
    at: Node<'_>,
    depth: usize,
) -> Result<BTreeSet<String>, String> {
    let mut keys = BTreeSet::new();
    let scope = ancestors(at)
        .find(|a| matches!(a.kind(), "function_statement" | "script_block_expression"))
        .unwrap_or_else(|| script.tree.root_node());
    let literal_keys = |node: Node<'_>, keys: &mut BTreeSet<String>| {
        for entry in descendants(node) {
            if entry.kind() == "key_expression"
                && entry.parent().is_some_and(|p| p.kind() == "hash_entry")
                && ancestors(entry).find(|a| a.kind() == "hash_literal_expression")
                    == descendants(node)
                        .into_iter()
                        .find(|d| d.kind() == "hash_literal_expression")
            {
                keys.insert(script_key(script.text(entry)));
            }
        }
    };
    for n in descendants(scope) {
        if n.kind() != "assignment_expression" {
            continue;
        }
        let Some(left) = n.child(0) else { continue };
        let left_text = script.text(left).trim().to_string();
        let Some(value) = n.child_by_field_name("value") else {
            continue;
        };
        if assigned_variable(script, n).is_some_and(|(_, v)| v == variable) {
            literal_keys(value, &mut keys);
            continue;
        }
        let prefix = left_text.to_ascii_lowercase();
        let name = format!("${variable}");
        if let Some(rest) = prefix.strip_prefix(&name) {
            let original = &left_text[name.len()..];
            if rest.starts_with('[') {
                let inner = original
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .trim();
                if inner.starts_with('\'') || inner.starts_with('"') && !inner.contains('$') {
                    keys.insert(script_key(inner));
                } else {
                    return Err(format!(
                        "{}: {left_text}: a splatted key the check cannot read (write it as a literal)",
                        script.at(n)
                    ));
                }
            } else if let Some(member) = rest.strip_prefix('.') {
                keys.insert(member.to_string());
            }
        }
    }
    // A parameter of the enclosing function: the hashtables its callers pass.
    if scope.kind() == "function_statement" && depth == 0 {
        let functions = functions(scripts);
        let entry = functions.iter().find(|(_, (_, f))| f.node == scope);
        if let Some((fname, (_, f))) = entry
            && f.parameters.contains(variable)
        {
            for caller in scripts {
                for c in commands(caller) {
                    if !c
                        .name
                        .as_ref()
                        .is_some_and(|n| n.eq_ignore_ascii_case(fname))
                    {
                        continue;
                    }
                    for (p, _, v) in &c.parameters {
                        let Some(v) = v else { continue };
                        if p != variable {
                            continue;
                        }
                        if descendants(*v)
                            .iter()
                            .any(|d| d.kind() == "hash_literal_expression")
                        {
                            literal_keys(*v, &mut keys);
                        } else if caller.text(*v).starts_with('$') {
                            let (inner, _) = variable_name(caller.text(*v));
                            keys.extend(splat_keys(scripts, caller, &inner, c.node, depth + 1)?);
                        }
                    }
                }
            }
        }
    }
    Ok(keys)
}

fn script_key(text: &str) -> String {
    text.trim().trim_matches(['\'', '"']).to_ascii_lowercase()
}

fn undocumented_calls(
    scripts: &[Script],
    cmdlets: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<String> {
    let functions = functions(scripts);
    let tools = native_tools();
    let mut used: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut out = Vec::new();
    for script in scripts {
        for c in commands(script) {
            let Some(name) = &c.name else { continue };
            // A command name is a word (Verb-Noun, a tool); an expression the grammar reads
            // as one (`0..7 | ...`) is not a call.
            if !name
                .chars()
                .next()
                .is_some_and(|ch| ch.is_ascii_alphabetic())
                || name.contains("..")
            {
                continue;
            }
            let lower = name.to_ascii_lowercase();
            if tools.contains_key(&lower) || tools.contains_key(&format!("{lower}.exe")) {
                continue;
            }
            let is_cmdlet = !functions.contains_key(&lower);
            let allowed = if let Some((_, f)) = functions.get(&lower) {
                &f.parameters
            } else if let Some(p) = cmdlets.get(&lower) {
                used.entry(lower.clone()).or_default();
                p
            } else {
                out.push(format!(
                    "{}: {name} is not in cmdlets.tsv",
                    script.at(c.node)
                ));
                continue;
            };
            let mut given: Vec<(String, Node<'_>)> = c
                .parameters
                .iter()
                .map(|(p, n, _)| (p.clone(), *n))
                .collect();
            for (v, n) in &c.splats {
                match splat_keys(scripts, script, v, *n, 0) {
                    Ok(keys) if keys.is_empty() => out.push(format!(
                        "{}: @{v}: no keys found for the splatted hashtable",
                        script.at(*n)
                    )),
                    Ok(keys) => given.extend(keys.into_iter().map(|k| (k, *n))),
                    Err(e) => out.push(e),
                }
            }
            for (p, n) in given {
                if is_cmdlet {
                    used.entry(lower.clone()).or_default().insert(p.clone());
                }
                if !allowed.contains(&p) && !COMMON.contains(&p.as_str()) {
                    out.push(format!(
                        "{}: {name} -{p}: not a parameter of {name} ({})",
                        script.at(n),
                        if functions.contains_key(&lower) {
                            "its param block"
                        } else {
                            "cmdlets.tsv"
                        }
                    ));
                }
            }
        }
    }
    // The table holds what the scripts use, nothing more: a row or a parameter no script uses
    // any longer is dropped, so that each entry stays one that was read for a call.
    if scripts.len() > 1 {
        for (cmdlet, parameters) in cmdlets {
            match used.get(cmdlet) {
                None => out.push(format!("cmdlets.tsv: {cmdlet} is called by no script")),
                Some(given) => {
                    for p in parameters.iter().filter(|p| !given.contains(*p)) {
                        out.push(format!("cmdlets.tsv: {cmdlet} -{p} is given by no script"));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_cmdlet_and_parameter_is_in_the_documented_table() {
    let cmdlets = cmdlet_table();
    let found = undocumented_calls(&real_scripts(), &cmdlets);
    assert!(
        found.is_empty(),
        "cmdlets and parameters:\n  {}",
        found.join("\n  ")
    );

    let bad = Script::new(
        "bad.ps1",
        "function Set-Thing {\n    param([string] $Name)\n}\n\
         Set-NetAdapterAdvancedProperty -Name a -RegistryKeyword VlanID -Value 5\n\
         Get-NetAdapterQoss -Name a\nSet-Thing -Nmae a\n\
         $arguments = @{ Name = 'SMB'; Priority = 3; Bandwidth = 30 }\n$null = New-NetQosTrafficClass @arguments\n\
         $policy = @{ Name = 'p' }\n$policy[$template] = $true\nNew-NetQosPolicy @policy\n",
    );
    let found = undocumented_calls(std::slice::from_ref(&bad), &cmdlets);
    assert_eq!(found.len(), 5, "{found:?}");
    assert!(
        found[0].starts_with("bad.ps1:4: Set-NetAdapterAdvancedProperty -value"),
        "{found:?}"
    );
    assert!(
        found[1].starts_with("bad.ps1:5: Get-NetAdapterQoss is not"),
        "{found:?}"
    );
    assert!(
        found[2].starts_with("bad.ps1:6: Set-Thing -nmae"),
        "{found:?}"
    );
    assert!(
        found[3].starts_with("bad.ps1:8: New-NetQosTrafficClass -bandwidth"),
        "{found:?}"
    );
    assert!(
        found[4].starts_with("bad.ps1:10: $policy[$template]"),
        "{found:?}"
    );
    let good = Script::new(
        "good.ps1",
        "function Set-Thing {\n    param([string] $Name)\n}\nSet-Thing -Name a\n\
         Set-NetAdapterAdvancedProperty -Name a -RegistryKeyword VlanID -RegistryValue 5 -ErrorAction Stop\n\
         $arguments = @{ Name = 'SMB'; Priority = 3 }\n$arguments['BandwidthPercentage'] = 30\n\
         $null = New-NetQosTrafficClass @arguments\n",
    );
    assert_eq!(
        undocumented_calls(std::slice::from_ref(&good), &cmdlets),
        Vec::<String>::new()
    );
}

// ---- Rule: an array returned whole is not piped on or wrapped again ---------------------------

/// The functions of the scripts that return an array whole (`return , $x`, or a statement
/// `, $x`), lower case.
fn whole_array_functions(scripts: &[Script]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (name, (index, f)) in functions(scripts) {
        let script = &scripts[index];
        let whole = descendants(f.node).into_iter().any(|n| {
            let t = script.text(n).trim_start();
            (n.kind() == "flow_control_statement" && {
                let rest = t.get(6..).unwrap_or_default().trim_start();
                t.to_ascii_lowercase().starts_with("return") && rest.starts_with(',')
            }) || (n.kind() == "pipeline"
                && t.starts_with(',')
                && n.parent().is_some_and(|p| p.kind() == "statement_list"))
        });
        if whole {
            out.insert(name);
        }
    }
    out
}

/// Calls of a function that returns its array whole, where the array is handed on as one
/// object: piped straight on (`F | ForEach-Object`: one pipeline object, the whole array) or
/// wrapped in `@(F)` (an array of one element, the array: `@(F).Count` is always 1). Assign it
/// (`$x = F`), or put it in parentheses (`(F).Count`, `foreach ($a in (F))`).
fn rewrapped_arrays(scripts: &[Script]) -> Vec<String> {
    let whole = whole_array_functions(scripts);
    let mut out = Vec::new();
    for script in scripts {
        for c in commands(script) {
            let Some(name) = &c.name else { continue };
            if !whole.contains(&name.to_ascii_lowercase()) {
                continue;
            }
            let mut up = ancestors(c.node).skip_while(|a| {
                matches!(a.kind(), "pipeline_chain" | "pipeline" | "statement_list")
            });
            // `A | B`: one pipeline_chain whose children are the piped commands.
            let piped = c.node.parent().is_some_and(|chain| {
                chain.kind() == "pipeline_chain"
                    && chain.named_child(0) == Some(c.node)
                    && chain.named_child_count() > 1
            });
            if piped {
                out.push(format!(
                    "{}: {name} returns its array whole, and a pipe hands it on as one object: assign it first",
                    script.at(c.node)
                ));
            } else if up.next().is_some_and(|a| a.kind() == "array_expression") {
                out.push(format!(
                    "{}: @({name} ...) wraps the array {name} returns whole into one element: write ({name} ...)",
                    script.at(c.node)
                ));
            }
        }
    }
    out
}

#[test]
fn an_array_returned_whole_is_not_piped_on_or_wrapped_again() {
    let found = rewrapped_arrays(&real_scripts());
    assert!(
        found.is_empty(),
        "arrays returned whole:\n  {}",
        found.join("\n  ")
    );

    // The defect this rule was written for: @(Get-DcbndkRdmaChannel).Count, always 1.
    let bad = Script::new(
        "bad.ps1",
        "function Get-Channel {\n    return , @(Get-SmbMultichannelConnection | Where-Object { $_.ClientRdmaCapable })\n}\n\
         function Get-Rows {\n    , @(1, 2)\n}\n\
         if (@(Get-Channel).Count -gt 0) { 'rdma' }\n$n = Get-Rows | ForEach-Object { $_ * 2 }\n",
    );
    let found = rewrapped_arrays(std::slice::from_ref(&bad));
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].starts_with("bad.ps1:7: @(Get-Channel"),
        "{found:?}"
    );
    assert!(found[1].starts_with("bad.ps1:8: Get-Rows"), "{found:?}");
    let good = Script::new(
        "good.ps1",
        "function Get-Channel {\n    return , @(Get-SmbMultichannelConnection)\n}\n\
         if ((Get-Channel).Count -gt 0) { 'rdma' }\n$c = Get-Channel\nforeach ($x in (Get-Channel)) { $x }\n\
         $r = @((Get-Channel) | ForEach-Object { $_ })\n",
    );
    assert_eq!(
        rewrapped_arrays(std::slice::from_ref(&good)),
        Vec::<String>::new()
    );
}

#Requires -Version 5.1
<#
.SYNOPSIS
Helpers shared by the dcbndk test-VM scripts. Dot-source it; it does nothing on its own.

.DESCRIPTION
- Invoke-DcbndkStep runs one named step and turns any failure into "Step failed: <name>: <why>".
- Invoke-DcbndkNative runs a native tool (pnputil, devgen) and fails on an unexpected exit code.
- The state file (%ProgramData%\dcbndk\state.json) records what the scripts changed on the
  machine (certificates, driver package, devices, DCB feature, QoS settings), so that
  Uninstall-Dcbndk.ps1 undoes exactly that and leaves the machine as it was found.
- ConvertFrom-DcbndkToml reads the scenario files (a small subset of TOML, see README.md).
- Get-DcbndkViewBlock cuts the formatted Get-NetAdapterQos view into its labelled blocks.
#>

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

$script:DcbndkHardwareIds = @('root\dcbndk', 'root\dcbndk_b')
$script:DcbndkStateDir = Join-Path $env:ProgramData 'dcbndk'
$script:DcbndkStatePath = Join-Path $script:DcbndkStateDir 'state.json'

function Invoke-DcbndkStep {
    <# Runs $Action as the step $Name; a failure stops the script with the step's name. #>
    [CmdletBinding()]
    param(
        [Parameter(Mandatory)] [string] $Name,
        [Parameter(Mandatory)] [scriptblock] $Action
    )
    Write-Host "==> $Name"
    try {
        & $Action
    }
    catch {
        throw "Step failed: ${Name}: $($_.Exception.Message)"
    }
}

function Invoke-DcbndkNative {
    <# Runs a native command; returns its output; throws unless the exit code is in $SuccessCode. #>
    [CmdletBinding()]
    param(
        [Parameter(Mandatory)] [string] $FilePath,
        [string[]] $ArgumentList = @(),
        [int[]] $SuccessCode = @(0)
    )
    # Windows PowerShell 5.1 turns a native tool's stderr into error records, which 'Stop' would
    # make fatal before the exit code is known: judge by the exit code alone.
    $previous = $ErrorActionPreference
    $ErrorActionPreference = 'Continue'
    try {
        $output = & $FilePath @ArgumentList 2>&1 | Out-String
        $code = $LASTEXITCODE
    }
    finally {
        $ErrorActionPreference = $previous
    }
    Write-Verbose $output
    if ($SuccessCode -notcontains $code) {
        throw "'$FilePath $($ArgumentList -join ' ')' exited with $code`n$output"
    }
    [pscustomobject]@{ ExitCode = $code; Output = $output }
}

function Assert-DcbndkAdministrator {
    $identity = [Security.Principal.WindowsIdentity]::GetCurrent()
    $principal = New-Object Security.Principal.WindowsPrincipal -ArgumentList $identity
    if (-not $principal.IsInRole([Security.Principal.WindowsBuiltInRole]::Administrator)) {
        throw 'Run this script from an elevated Windows PowerShell (Run as Administrator).'
    }
}

function Test-DcbndkTestSigning {
    <# True when the running boot has test signing on (bcdedit /set testsigning on + reboot). #>
    $control = Get-ItemProperty -Path 'HKLM:\SYSTEM\CurrentControlSet\Control' -Name 'SystemStartOptions'
    return ($control.SystemStartOptions -match 'TESTSIGNING')
}

function Get-DcbndkKitVersion {
    <# The WDK version a Tools\<version> folder name gives ('10.0.22621.0'), 0.0 for any other name. #>
    param([string] $Folder)
    $version = $null
    if ([version]::TryParse($Folder, [ref]$version)) {
        return $version
    }
    return [version]'0.0'
}

function Find-DcbndkDevGen {
    <# devgen.exe: the given path, else PATH, else the WDK tools folders. #>
    param([string] $DevGenPath)
    if ($DevGenPath) {
        if (-not (Test-Path -LiteralPath $DevGenPath -PathType Leaf)) {
            throw "devgen.exe not found at $DevGenPath"
        }
        # ProviderPath: the file-system path a native tool can open (Path keeps a provider
        # qualifier for a UNC path, "Microsoft.PowerShell.Core\FileSystem::\\server\...").
        return (Resolve-Path -LiteralPath $DevGenPath).ProviderPath
    }
    $command = Get-Command -Name 'devgen.exe' -CommandType Application -ErrorAction SilentlyContinue
    if ($command) {
        return @($command)[0].Source
    }
    $kits = Join-Path ([Environment]::GetFolderPath('ProgramFilesX86')) 'Windows Kits\10\Tools'
    if (Test-Path -LiteralPath $kits) {
        # The newest WDK first: Tools\<version>\x64 by version (10.0.26100.0 after 10.0.22621.0),
        # then the older Tools\x64 layout, whose folder name is no version. A sort by FullName would
        # put Tools\x64 first ('x' sorts after digits).
        $found = @(Get-ChildItem -Path $kits -Filter 'devgen.exe' -Recurse -ErrorAction SilentlyContinue |
                Where-Object { $_.DirectoryName -like '*\x64' } |
                Sort-Object -Property @{ Expression = { Get-DcbndkKitVersion -Folder $_.Directory.Parent.Name }; Descending = $true },
                @{ Expression = { $_.FullName }; Descending = $true })
        if ($found.Count -gt 0) {
            return $found[0].FullName
        }
    }
    return $null
}

# ---- State: what the scripts changed -----------------------------------------------------

function Read-DcbndkState {
    <# The state file as a hashtable (empty when absent). #>
    $state = @{}
    if (Test-Path -LiteralPath $script:DcbndkStatePath) {
        $json = Get-Content -LiteralPath $script:DcbndkStatePath -Raw | ConvertFrom-Json
        foreach ($property in $json.PSObject.Properties) {
            $state[$property.Name] = $property.Value
        }
    }
    return $state
}

function Write-DcbndkState {
    param([Parameter(Mandatory)] [hashtable] $State)
    if (-not (Test-Path -LiteralPath $script:DcbndkStateDir)) {
        $null = New-Item -ItemType Directory -Path $script:DcbndkStateDir
    }
    $State | ConvertTo-Json -Depth 6 | Set-Content -LiteralPath $script:DcbndkStatePath -Encoding UTF8
}

function Get-DcbndkStateList {
    <# $State[$Name] as an array (absent -> empty). #>
    param([Parameter(Mandatory)] [hashtable] $State, [Parameter(Mandatory)] [string] $Name)
    if ($State.ContainsKey($Name) -and $null -ne $State[$Name]) {
        return , @($State[$Name])
    }
    return , @()
}

function Add-DcbndkStateItem {
    <# Appends $Item to the list $Name of the state file and saves it at once. #>
    param([Parameter(Mandatory)] [string] $Name, [Parameter(Mandatory)] $Item)
    $state = Read-DcbndkState
    $list = Get-DcbndkStateList -State $state -Name $Name
    $state[$Name] = @($list) + @($Item)
    Write-DcbndkState -State $state
}

function Set-DcbndkStateValue {
    param([Parameter(Mandatory)] [string] $Name, $Value)
    $state = Read-DcbndkState
    $state[$Name] = $Value
    Write-DcbndkState -State $state
}

# ---- Devices and adapters ----------------------------------------------------------------

function Get-DcbndkDevice {
    <# PnP devices (present or not) whose hardware ids include one of $HardwareId. #>
    param([string[]] $HardwareId = $script:DcbndkHardwareIds)
    @(Get-PnpDevice -ErrorAction SilentlyContinue | Where-Object {
            $ids = @($_.HardwareID)
            @($ids | Where-Object { $HardwareId -contains $_ }).Count -gt 0
        })
}

function Get-DcbndkAdapter {
    <# The one network adapter of the present device with hardware id $HardwareId. #>
    param([string] $HardwareId = 'root\dcbndk')
    $devices = @(Get-DcbndkDevice -HardwareId $HardwareId | Where-Object { $_.Present })
    if ($devices.Count -eq 0) {
        throw "No device with hardware id $HardwareId is present: run Install-Dcbndk.ps1 first."
    }
    $instanceIds = @($devices | ForEach-Object { $_.InstanceId })
    $adapters = @(Get-NetAdapter -IncludeHidden | Where-Object { $instanceIds -contains $_.PnPDeviceID })
    if ($adapters.Count -ne 1) {
        throw "Expected one network adapter for $HardwareId (devices: $($instanceIds -join ', ')), found $($adapters.Count)."
    }
    return $adapters[0]
}

function Set-DcbndkKeyword {
    <#
    Sets the advanced property $Keyword of adapter $Name to $Value, restarts the adapter so that
    the driver reads the keyword again at initialize, waits up to $TimeoutSeconds for the adapter
    to be back (Up or Disconnected), shows the keyword's row and throws unless its RegistryValue
    is $Value. Set-DcbndkVlan.ps1 and Set-DcbndkJumbo.ps1 use it.

    -NoRestart and then Restart-NetAdapter, not Set-NetAdapterAdvancedProperty's own restart:
    nothing documents that its restart has begun when it returns, so a poll right after it could
    see the adapter still Up from before. Restart-NetAdapter "restarts a network adapter by
    disabling and then re-enabling the network adapter" (learn.microsoft.com/powershell/module/
    netadapter/restart-netadapter) and, unlike Disable-NetAdapter followed by Enable-NetAdapter,
    waits for the disable to finish before it enables (Microsoft's NDIS team blog, "Why is there
    a redundant Restart-NetAdapter cmdlet?", learn.microsoft.com/archive/blogs/ndis/), so once it
    returns the adapter has been down and the poll sees the restarted one.
    #>
    param(
        [Parameter(Mandatory = $true)] [string] $Name,
        [Parameter(Mandatory = $true)] [string] $Keyword,
        [Parameter(Mandatory = $true)] [string] $Value,
        [int] $TimeoutSeconds = 30
    )
    Set-NetAdapterAdvancedProperty -Name $Name -RegistryKeyword $Keyword -RegistryValue $Value -NoRestart
    Restart-NetAdapter -Name $Name -IncludeHidden -Confirm:$false
    $deadline = (Get-Date).AddSeconds($TimeoutSeconds)
    do {
        $state = [string](Get-NetAdapter -Name $Name -IncludeHidden).Status
        if ($state -eq 'Up' -or $state -eq 'Disconnected') {
            break
        }
        Start-Sleep -Milliseconds 500
    } while ((Get-Date) -lt $deadline)
    if ($state -ne 'Up' -and $state -ne 'Disconnected') {
        throw "'$Name' is $state after $TimeoutSeconds s: the adapter did not come back after its restart"
    }
    # -AllProperties and an exact match: -RegistryKeyword takes wildcards (and '*' is one).
    $property = @(Get-NetAdapterAdvancedProperty -Name $Name -AllProperties -ErrorAction SilentlyContinue |
            Where-Object { $_.RegistryKeyword -eq $Keyword })
    if ($property.Count -ne 1) {
        throw "Get-NetAdapterAdvancedProperty shows $($property.Count) $Keyword rows for '$Name', expected 1 (is the INF the current one?)"
    }
    $property[0] | Format-Table -AutoSize RegistryKeyword, DisplayName, RegistryValue | Out-String -Width 4096 | Write-Host
    $now = [string](@($property[0].RegistryValue)[0])
    if ($now -ne $Value) {
        throw "$Keyword RegistryValue is '$now', expected '$Value'"
    }
}

# ---- QoS settings: record before a scenario, undo after ----------------------------------

function Select-DcbndkGlobalPolicy {
    <#
    The rows of the Global policy set among $Rows (Get-NetQosFlowControl, Get-NetQosDcbxSetting).
    Both cmdlets take -InterfaceAlias / -InterfaceIndex on Windows Server 2016 and later
    (learn.microsoft.com/powershell/module/dcbqos/get-netqosflowcontrol and
    .../get-netqosdcbxsetting), and Switch-NetQosFlowControl / Switch-NetQosDcbxSetting move an
    adapter between the policy sets Global and AdapterSpecific (-PolicySet), so without
    -InterfaceAlias they may list adapter-specific rows besides the global ones. These scripts set
    and restore only the global settings, so only those are recorded. A row without a PolicySet
    property (Windows Server 2012, before adapter-specific settings) is taken as global.
    #>
    param([object[]] $Rows = @())
    return , @($Rows | Where-Object {
            $policySet = $_.PSObject.Properties['PolicySet']
            $null -eq $policySet -or [string]$policySet.Value -eq 'Global'
        })
}

function Save-DcbndkQosBaseline {
    <# Records the global flow-control and DCBX-willing settings before a scenario changes them. #>
    # Assigned first: the function returns its rows as one array (return , @(...)), which a
    # pipeline straight after it would hand on as one object.
    $flowRows = Select-DcbndkGlobalPolicy -Rows @(Get-NetQosFlowControl)
    $flow = @($flowRows | ForEach-Object {
            [pscustomobject]@{ Priority = [int]$_.Priority; Enabled = [bool]$_.Enabled }
        })
    $dcbx = Select-DcbndkGlobalPolicy -Rows @(Get-NetQosDcbxSetting)
    if ($dcbx.Count -ne 1) {
        throw "Get-NetQosDcbxSetting shows $($dcbx.Count) global rows, expected 1"
    }
    $willing = [bool]$dcbx[0].Willing
    $state = Read-DcbndkState
    $state['qos_baseline'] = [pscustomobject]@{ FlowControl = $flow; Willing = $willing }
    $state['qos_traffic_classes'] = @()
    $state['qos_policies'] = @()
    Write-DcbndkState -State $state
}

function Undo-DcbndkQos {
    <# Removes the traffic classes and policies the scripts created and restores the baseline. #>
    $state = Read-DcbndkState
    $policies = Get-DcbndkStateList -State $state -Name 'qos_policies'
    foreach ($name in $policies) {
        if (Get-NetQosPolicy -Name $name -ErrorAction SilentlyContinue) {
            Write-Host "    Remove-NetQosPolicy $name"
            Remove-NetQosPolicy -Name $name -Confirm:$false
        }
    }
    $classes = Get-DcbndkStateList -State $state -Name 'qos_traffic_classes'
    foreach ($name in $classes) {
        if (Get-NetQosTrafficClass -Name $name -ErrorAction SilentlyContinue) {
            Write-Host "    Remove-NetQosTrafficClass $name"
            Remove-NetQosTrafficClass -Name $name -Confirm:$false
        }
    }
    if ($state.ContainsKey('qos_baseline') -and $null -ne $state['qos_baseline']) {
        $baseline = $state['qos_baseline']
        foreach ($entry in @($baseline.FlowControl)) {
            if ($entry.Enabled) {
                Enable-NetQosFlowControl -Priority ([byte]$entry.Priority)
            }
            else {
                Disable-NetQosFlowControl -Priority ([byte]$entry.Priority)
            }
        }
        Set-NetQosDcbxSetting -Willing ([bool]$baseline.Willing) -Confirm:$false
        Write-Host "    Restored flow control and DCBX Willing = $($baseline.Willing)"
    }
    $state.Remove('qos_baseline')
    $state.Remove('qos_traffic_classes')
    $state.Remove('qos_policies')
    Write-DcbndkState -State $state
}

# ---- Scenario files: a subset of TOML ----------------------------------------------------

function Remove-DcbndkTomlComment {
    <# The line without a '#' comment that is outside quotes. #>
    param([string] $Line)
    $quote = [char]0
    for ($i = 0; $i -lt $Line.Length; $i++) {
        $c = $Line[$i]
        if ($quote -ne [char]0) {
            if ($c -eq '\' -and $quote -eq '"') {
                $i++
            }
            elseif ($c -eq $quote) {
                $quote = [char]0
            }
        }
        elseif ($c -eq '"' -or $c -eq "'") {
            $quote = $c
        }
        elseif ($c -eq '#') {
            return $Line.Substring(0, $i)
        }
    }
    return $Line
}

function Split-DcbndkTomlArray {
    <# The items of '[a, "b, c", 3]' (one level, no nesting). #>
    param([string] $Text, [string] $Where)
    $items = New-Object System.Collections.Generic.List[string]
    $current = New-Object System.Text.StringBuilder
    $quote = [char]0
    for ($i = 0; $i -lt $Text.Length; $i++) {
        $c = $Text[$i]
        if ($quote -ne [char]0) {
            $null = $current.Append($c)
            if ($c -eq '\' -and $quote -eq '"' -and $i + 1 -lt $Text.Length) {
                $i++
                $null = $current.Append($Text[$i])
            }
            elseif ($c -eq $quote) {
                $quote = [char]0
            }
        }
        elseif ($c -eq '"' -or $c -eq "'") {
            $quote = $c
            $null = $current.Append($c)
        }
        elseif ($c -eq '[' -or $c -eq ']') {
            throw "${Where}: nested arrays are not supported"
        }
        elseif ($c -eq ',') {
            $items.Add($current.ToString().Trim())
            $null = $current.Clear()
        }
        else {
            $null = $current.Append($c)
        }
    }
    if ($quote -ne [char]0) {
        throw "${Where}: unterminated string in array"
    }
    $last = $current.ToString().Trim()
    if ($last -ne '') {
        $items.Add($last)
    }
    elseif ($items.Count -gt 0 -and $items[$items.Count - 1] -eq '') {
        throw "${Where}: empty array item"
    }
    return , $items.ToArray()
}

function ConvertFrom-DcbndkTomlValue {
    param([string] $Text, [string] $Where)
    $Text = $Text.Trim()
    if ($Text -match '^"((?:[^"\\]|\\.)*)"$') {
        $body = $Matches[1]
        $out = New-Object System.Text.StringBuilder
        for ($i = 0; $i -lt $body.Length; $i++) {
            $c = [string]$body[$i]
            if ($c -ne '\') {
                $null = $out.Append($c)
                continue
            }
            $i++
            $escape = [string]$body[$i]
            switch -CaseSensitive ($escape) {
                'n' { $null = $out.Append("`n") }
                't' { $null = $out.Append("`t") }
                '"' { $null = $out.Append('"') }
                '\' { $null = $out.Append('\') }
                default { throw "${Where}: unsupported escape \$escape" }
            }
        }
        return $out.ToString()
    }
    if ($Text -match "^'([^']*)'$") {
        return $Matches[1]
    }
    if ($Text -ceq 'true') {
        return $true
    }
    if ($Text -ceq 'false') {
        return $false
    }
    if ($Text -match '^[+-]?[0-9]+$') {
        return [int64]$Text
    }
    if ($Text.StartsWith('[') -and $Text.EndsWith(']')) {
        $inner = $Text.Substring(1, $Text.Length - 2)
        $items = Split-DcbndkTomlArray -Text $inner -Where $Where
        $values = @(foreach ($item in $items) {
                ConvertFrom-DcbndkTomlValue -Text $item -Where $Where
            })
        return , $values
    }
    throw "${Where}: unsupported value '$Text' (strings, integers, booleans and one-line arrays only)"
}

function ConvertFrom-DcbndkToml {
    <#
    Reads the TOML subset of the scenario files: [table], [a.b], [[array.of.tables]],
    key = value with basic/literal strings, integers, booleans and one-line arrays, # comments.
    Tables are hashtables; [[x]] is a list of hashtables.
    #>
    param([Parameter(Mandatory)] [string] $Path)
    $root = @{}
    $table = $root
    $number = 0
    foreach ($raw in (Get-Content -LiteralPath $Path -Encoding UTF8)) {
        $number++
        $where = "${Path}:${number}"
        $line = (Remove-DcbndkTomlComment -Line $raw).Trim()
        if ($line -eq '') {
            continue
        }
        if ($line -match '^\[\[\s*([A-Za-z0-9_.-]+)\s*\]\]$') {
            $parts = $Matches[1].Split('.')
            $parentParts = @()
            if ($parts.Count -gt 1) {
                $parentParts = $parts[0..($parts.Count - 2)]
            }
            $parent = Get-DcbndkTomlTable -Root $root -Parts $parentParts -Where $where
            $leaf = $parts[-1]
            if (-not $parent.ContainsKey($leaf)) {
                $parent[$leaf] = New-Object System.Collections.ArrayList
            }
            if ($parent[$leaf] -isnot [System.Collections.ArrayList]) {
                throw "${where}: [[$($Matches[1])]] is already a table or value"
            }
            $table = @{}
            $null = $parent[$leaf].Add($table)
        }
        elseif ($line -match '^\[\s*([A-Za-z0-9_.-]+)\s*\]$') {
            $table = Get-DcbndkTomlTable -Root $root -Parts $Matches[1].Split('.') -Where $where
        }
        elseif ($line -match '^([A-Za-z0-9_-]+)\s*=\s*(.+)$') {
            $key = $Matches[1]
            $valueText = $Matches[2]
            if ($table.ContainsKey($key)) {
                throw "${where}: key '$key' is defined twice"
            }
            $table[$key] = ConvertFrom-DcbndkTomlValue -Text $valueText -Where $where
        }
        else {
            throw "${where}: not a line of the scenario format: $raw"
        }
    }
    return $root
}

function Get-DcbndkTomlTable {
    param([hashtable] $Root, [string[]] $Parts, [string] $Where)
    $table = $Root
    foreach ($part in @($Parts)) {
        if (-not $table.ContainsKey($part)) {
            $table[$part] = @{}
        }
        $next = $table[$part]
        if ($next -is [System.Collections.ArrayList]) {
            if ($next.Count -eq 0) {
                throw "${Where}: [[$part]] has no table yet"
            }
            $next = $next[$next.Count - 1]
        }
        if ($next -isnot [hashtable]) {
            throw "${Where}: '$part' is a value, not a table"
        }
        $table = $next
    }
    return $table
}

function Assert-DcbndkKeys {
    <# Fails on a key of $Table that is not in $Allowed (a typo in a scenario must not pass). #>
    param([hashtable] $Table, [string[]] $Allowed, [string] $Where)
    foreach ($key in $Table.Keys) {
        if ($Allowed -notcontains $key) {
            throw "${Where}: unknown key '$key' (allowed: $($Allowed -join ', '))"
        }
    }
}

function Read-DcbndkScenario {
    <# Reads and validates a scenario file (README.md, "Scenario files"). #>
    param([Parameter(Mandatory)] [string] $Path)
    if (-not (Test-Path -LiteralPath $Path -PathType Leaf)) {
        throw "Scenario file not found: $Path"
    }
    $scenario = ConvertFrom-DcbndkToml -Path $Path
    Assert-DcbndkKeys -Table $scenario -Where $Path -Allowed @(
        'name', 'description', 'adapter', 'dcbx', 'traffic_class', 'flow_control', 'policy', 'expect')
    if (-not $scenario.ContainsKey('name')) {
        throw "${Path}: the scenario needs a name"
    }
    if ($scenario.ContainsKey('adapter')) {
        Assert-DcbndkKeys -Table $scenario['adapter'] -Where "$Path [adapter]" -Allowed @('hardware_id')
    }
    if ($scenario.ContainsKey('dcbx')) {
        Assert-DcbndkKeys -Table $scenario['dcbx'] -Where "$Path [dcbx]" -Allowed @('willing')
    }
    if ($scenario.ContainsKey('flow_control')) {
        Assert-DcbndkKeys -Table $scenario['flow_control'] -Where "$Path [flow_control]" -Allowed @('enabled')
    }
    $classes = Get-DcbndkScenarioList -Scenario $scenario -Name 'traffic_class'
    foreach ($class in $classes) {
        Assert-DcbndkKeys -Table $class -Where "$Path [[traffic_class]]" -Allowed @(
            'name', 'algorithm', 'priorities', 'bandwidth')
        foreach ($required in @('name', 'algorithm', 'priorities')) {
            if (-not $class.ContainsKey($required)) {
                throw "${Path}: a [[traffic_class]] needs '$required'"
            }
        }
    }
    $policies = Get-DcbndkScenarioList -Scenario $scenario -Name 'policy'
    foreach ($policy in $policies) {
        Assert-DcbndkKeys -Table $policy -Where "$Path [[policy]]" -Allowed @(
            'name', 'priority', 'netdirect_port', 'template', 'ip_protocol', 'ip_dst_port')
        foreach ($required in @('name', 'priority')) {
            if (-not $policy.ContainsKey($required)) {
                throw "${Path}: a [[policy]] needs '$required'"
            }
        }
    }
    if ($scenario.ContainsKey('expect')) {
        Assert-DcbndkKeys -Table $scenario['expect'] -Where "$Path [expect]" -Allowed @(
            'qos', 'rdma', 'rdma_statistics')
        if ($scenario['expect'].ContainsKey('qos')) {
            Assert-DcbndkKeys -Table $scenario['expect']['qos'] -Where "$Path [expect.qos]" -Allowed @(
                'enabled',
                'operational_traffic_classes', 'operational_flow_control', 'operational_classifications',
                'remote_traffic_classes', 'remote_flow_control', 'remote_classifications')
        }
    }
    return $scenario
}

function Get-DcbndkScenarioList {
    <# The [[Name]] tables of a scenario (absent -> empty). #>
    param([hashtable] $Scenario, [string] $Name)
    if ($Scenario.ContainsKey($Name)) {
        return , @($Scenario[$Name])
    }
    return , @()
}

function Get-DcbndkScenarioHardwareId {
    param([hashtable] $Scenario, [string] $Override)
    if ($Override) {
        return $Override
    }
    if ($Scenario.ContainsKey('adapter') -and $Scenario['adapter'].ContainsKey('hardware_id')) {
        return [string]$Scenario['adapter']['hardware_id']
    }
    return 'root\dcbndk'
}

# ---- The formatted Get-NetAdapterQos view -------------------------------------------------

function Get-DcbndkViewBlock {
    <#
    Cuts a Format-List rendering into its labelled blocks: 'Label : first line' starts a block,
    indented lines continue it. Returns a hashtable label -> array of lines, each with runs of
    blanks collapsed; blank lines, '--' rulers and the table header above a ruler are dropped
    (the TC TSA / Protocol Port headers and the Capabilities block's Hardware Current).
    The indented rows keep their own ' : ' ('MacSecBypass : NotSupported NotSupported'): only a
    line that starts with a non-blank starts a block. tests/src/conformance/powershell_views.rs
    runs this logic, with these regexes read from this file, on the views the simulated adapter
    renders.
    #>
    param([Parameter(Mandatory)] [string] $Text)
    $blocks = @{}
    $label = $null
    foreach ($line in ($Text -split "`r?`n")) {
        if ($line -match '^(\S[^:]*?)\s*:\s?(.*)$') {
            $label = $Matches[1].Trim()
            $blocks[$label] = New-Object System.Collections.ArrayList
            $line = $Matches[2]
        }
        if ($null -eq $label) {
            continue
        }
        $row = ($line.Trim() -replace '\s+', ' ')
        if ($row -eq '') {
            continue
        }
        if ($row -match '^[-\s]+$') {
            # A ruler: the row above it was the table's header.
            if ($blocks[$label].Count -gt 0) {
                $blocks[$label].RemoveAt($blocks[$label].Count - 1)
            }
            continue
        }
        $null = $blocks[$label].Add($row)
    }
    return $blocks
}

function ConvertTo-DcbndkViewRow {
    <# A row as compared: blanks collapsed, '%' dropped (older Windows prints 40, newer 40%). #>
    param([string] $Row)
    return (($Row.Trim() -replace '\s+', ' ') -replace '%', '')
}

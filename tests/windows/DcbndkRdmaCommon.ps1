#Requires -Version 5.1
<#
.SYNOPSIS
Helpers shared by the NDK (RDMA) scripts: Test-DcbndkRdma.ps1, Test-SmbDirect.ps1,
Invoke-TestNetStack.ps1, and by Uninstall-Dcbndk.ps1 to undo what they changed. Dot-source it
after DcbndkCommon.ps1; it does nothing on its own.

.DESCRIPTION
- New-DcbndkCheck / New-DcbndkCondition / New-DcbndkInfo and Write-DcbndkReport: expectations
  reported as PASS / FAIL (with the reason when one is known) / INFO, and "N passed, M failed".
- Get-DcbndkKeywordValue: the value the driver uses for one of its keywords (the adapter's
  registry value when the keyword accepts it, the default otherwise; driver/core/src/adapter/
  config.rs decide_value).
- Set-DcbndkAdapterAddress / Undo-DcbndkAdapterAddress: a static IPv4 address on an adapter,
  recorded with the interface's DHCP setting so that it is removed and DHCP restored.
- Undo-DcbndkSmb: the SMB mappings, multichannel constraints, shares and share folders that
  Test-SmbDirect.ps1 created.
- Install-DcbndkGalleryModule / Undo-DcbndkGalleryModule: a PowerShell Gallery module (and the
  NuGet package provider PowerShellGet needs for it) installed only when absent, recorded.
- Save-DcbndkFirewallRule / Undo-DcbndkFirewallRule: the firewall rules Test-NetStack's
  -EnableFirewallRules enables or creates, restored to what they were.
Everything recorded goes to %ProgramData%\dcbndk\state.json (DcbndkCommon.ps1).
#>

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

# ---- Expectations: PASS / FAIL / INFO ------------------------------------------------------

function New-DcbndkCheck {
    <# An expectation compared as JSON (value and type), as Test-Scenario.ps1 compares. #>
    param([Parameter(Mandatory)] [string] $Check, $Expected, $Actual, [string] $Why = '')
    $want = ConvertTo-Json -InputObject $Expected -Compress
    $got = ConvertTo-Json -InputObject $Actual -Compress
    [pscustomobject]@{ Check = $Check; Passed = ($want -ceq $got); Expected = $want; Actual = $got; Why = $Why }
}

function New-DcbndkCondition {
    <# An expectation that is a condition; Expected and Actual say in words what was wanted and seen. #>
    param(
        [Parameter(Mandatory)] [string] $Check,
        [Parameter(Mandatory)] [bool] $Holds,
        [string] $Expected = '',
        [string] $Actual = '',
        [string] $Why = ''
    )
    [pscustomobject]@{ Check = $Check; Passed = $Holds; Expected = $Expected; Actual = $Actual; Why = $Why }
}

function New-DcbndkInfo {
    <# A line shown that neither passes nor fails: what this Windows does not show, or context. #>
    param([Parameter(Mandatory)] [string] $Check, [string] $Actual = '')
    [pscustomobject]@{ Check = $Check; Passed = $null; Expected = ''; Actual = $Actual; Why = '' }
}

function Write-DcbndkReport {
    <#
    Prints one PASS / FAIL / INFO line per result and "N passed, M failed"; writes the results as
    JSON to $ReportPath when given. Returns the number of failures.
    #>
    param([object[]] $Results = @(), [string] $ReportPath = '')
    $passed = 0
    $failed = 0
    foreach ($result in $Results) {
        if ($null -eq $result.Passed) {
            Write-Host "INFO $($result.Check): $($result.Actual)" -ForegroundColor Cyan
        }
        elseif ($result.Passed) {
            $passed++
            Write-Host "PASS $($result.Check) = $($result.Actual)" -ForegroundColor Green
        }
        else {
            $failed++
            $line = "FAIL $($result.Check): expected $($result.Expected), got $($result.Actual)"
            if ($result.Why) {
                $line += " -- $($result.Why)"
            }
            Write-Host $line -ForegroundColor Red
        }
    }
    if ($ReportPath) {
        ConvertTo-Json -InputObject @($Results) -Depth 4 | Set-Content -LiteralPath $ReportPath -Encoding UTF8
        Write-Host "Results written to $ReportPath"
    }
    Write-Host "$passed passed, $failed failed"
    return $failed
}

function Get-DcbndkMember {
    <#
    $Object.$Name, or a text saying why there is none ('<no object>', '<no property X>'): strict
    mode makes a missing property an error, and a missing one must be a FAIL, not a crash.
    #>
    param($Object, [Parameter(Mandatory)] [string] $Name)
    if ($null -eq $Object) {
        return '<no object>'
    }
    if (@($Object.PSObject.Properties | ForEach-Object { $_.Name }) -notcontains $Name) {
        return "<no property $Name>"
    }
    return $Object.$Name
}

function Test-DcbndkHasMember {
    param($Object, [Parameter(Mandatory)] [string] $Name)
    return ($null -ne $Object -and @($Object.PSObject.Properties | ForEach-Object { $_.Name }) -contains $Name)
}

# ---- The driver's keywords ----------------------------------------------------------------

function Get-DcbndkAdvancedProperty {
    <#
    The advanced property $Keyword of adapter $AdapterName, or $null. Matched exactly: the
    cmdlet's -RegistryKeyword takes wildcards, and the standard keywords begin with '*'.
    #>
    param([Parameter(Mandatory)] [string] $AdapterName, [Parameter(Mandatory)] [string] $Keyword)
    $found = @(Get-NetAdapterAdvancedProperty -Name $AdapterName -AllProperties -ErrorAction SilentlyContinue |
            Where-Object { $_.RegistryKeyword -eq $Keyword })
    if ($found.Count -eq 0) {
        return $null
    }
    return $found[0]
}

function Get-DcbndkKeywordValue {
    <#
    The value the driver uses for keyword $Keyword of adapter $AdapterName: the registry value
    when it is an integer the keyword accepts (in $Min..$Max, or one of $Choices), else
    $Default (driver/core/src/adapter/config.rs, decide_value: an absent or invalid value
    falls back to the default, with a warning in the System log).
    #>
    param(
        [Parameter(Mandatory)] [string] $AdapterName,
        [Parameter(Mandatory)] [string] $Keyword,
        [Parameter(Mandatory)] [int64] $Default,
        [int64] $Min = [int64]::MinValue,
        [int64] $Max = [int64]::MaxValue,
        [int64[]] $Choices = @()
    )
    $property = Get-DcbndkAdvancedProperty -AdapterName $AdapterName -Keyword $Keyword
    if ($null -eq $property) {
        return $Default
    }
    $raw = [string](@($property.RegistryValue) | Select-Object -First 1)
    $number = [int64]0
    if (-not [int64]::TryParse($raw, [ref]$number)) {
        return $Default
    }
    if ($Choices.Count -gt 0) {
        if ($Choices -contains $number) {
            return $number
        }
        return $Default
    }
    if ($number -ge $Min -and $number -le $Max) {
        return $number
    }
    return $Default
}

function Assert-DcbndkNetworkDirect {
    <# Fails unless the adapter's *NetworkDirect keyword is 1 (the INF's default). #>
    param([Parameter(Mandatory)] $Adapter)
    $value = Get-DcbndkKeywordValue -AdapterName $Adapter.Name -Keyword '*NetworkDirect' -Default 1 -Choices @(0, 1)
    if ($value -ne 1) {
        throw ("'$($Adapter.Name)' has *NetworkDirect = ${value}: NDK is off. Run " +
            "'Enable-NetAdapterRdma -Name ""$($Adapter.Name)""' (it restarts the adapter) and run this script again.")
    }
}

function Get-DcbndkVirtualWire {
    <# The adapter's SimVirtualWire (driver/src/resources/wire.rs: adapters with the same number hear each other). #>
    param([Parameter(Mandatory)] $Adapter)
    return (Get-DcbndkKeywordValue -AdapterName $Adapter.Name -Keyword 'SimVirtualWire' -Default 1 -Min 0 -Max 65535)
}

# ---- IPv4 addresses given to the adapters ------------------------------------------------

function Get-DcbndkSubnet {
    <# '198.18.21.0/24' for 198.18.21.7 and 24. #>
    param([Parameter(Mandatory)] [string] $IPAddress, [Parameter(Mandatory)] [int] $PrefixLength)
    $bytes = ([System.Net.IPAddress]::Parse($IPAddress)).GetAddressBytes()
    if ($bytes.Count -ne 4) {
        throw "$IPAddress is not an IPv4 address"
    }
    for ($i = 0; $i -lt 4; $i++) {
        $bits = [Math]::Max(0, [Math]::Min(8, $PrefixLength - 8 * $i))
        $mask = (0xFF -shl (8 - $bits)) -band 0xFF
        $bytes[$i] = [byte]($bytes[$i] -band $mask)
    }
    return "$(([System.Net.IPAddress]::new($bytes)).ToString())/$PrefixLength"
}

function Set-DcbndkAdapterAddress {
    <#
    Gives $Adapter the static IPv4 address $IPAddress/$PrefixLength unless it has it already.
    The address and the interface's DHCP setting are recorded before New-NetIPAddress (which
    turns DHCP off on the interface), so Uninstall-Dcbndk.ps1 removes the one and restores the
    other. Fails when another interface holds the address. Waits until the address is Preferred
    (duplicate address detection done).
    #>
    param(
        [Parameter(Mandatory)] $Adapter,
        [Parameter(Mandatory)] [string] $IPAddress,
        [Parameter(Mandatory)] [int] $PrefixLength
    )
    $index = [int]$Adapter.InterfaceIndex
    $existing = @(Get-NetIPAddress -AddressFamily IPv4 -IPAddress $IPAddress -ErrorAction SilentlyContinue)
    $elsewhere = @($existing | Where-Object { [int]$_.InterfaceIndex -ne $index })
    if ($elsewhere.Count -gt 0) {
        throw "$IPAddress is already on '$($elsewhere[0].InterfaceAlias)' (interface $($elsewhere[0].InterfaceIndex)): give another address"
    }
    if ($existing.Count -gt 0) {
        Write-Host "    '$($Adapter.Name)' already has $IPAddress"
    }
    else {
        $dhcp = [string](Get-NetIPInterface -InterfaceIndex $index -AddressFamily IPv4).Dhcp
        Add-DcbndkStateItem -Name 'ip_addresses' -Item ([pscustomobject]@{
                InterfaceIndex = $index
                InterfaceAlias = [string]$Adapter.Name
                IPAddress      = $IPAddress
                PrefixLength   = $PrefixLength
                Dhcp           = $dhcp
            })
        $null = New-NetIPAddress -InterfaceIndex $index -AddressFamily IPv4 -IPAddress $IPAddress -PrefixLength $PrefixLength -Type Unicast
        Write-Host "    $IPAddress/$PrefixLength on '$($Adapter.Name)' (interface $index; DHCP was $dhcp)"
    }
    $deadline = (Get-Date).AddSeconds(30)
    while ($true) {
        $address = @(Get-NetIPAddress -AddressFamily IPv4 -IPAddress $IPAddress -InterfaceIndex $index)[0]
        if ([string]$address.AddressState -eq 'Preferred') {
            return
        }
        if ((Get-Date) -gt $deadline) {
            throw "$IPAddress on '$($Adapter.Name)' is still $($address.AddressState) after 30 s (Duplicate: another host on the adapter's wire has it)"
        }
        Start-Sleep -Seconds 1
    }
}

function Undo-DcbndkAdapterAddress {
    <# Removes the addresses Set-DcbndkAdapterAddress added and turns DHCP back on where it was on. #>
    $state = Read-DcbndkState
    $entries = Get-DcbndkStateList -State $state -Name 'ip_addresses'
    foreach ($entry in $entries) {
        $index = [int]$entry.InterfaceIndex
        $present = @(Get-NetIPAddress -AddressFamily IPv4 -IPAddress $entry.IPAddress -ErrorAction SilentlyContinue |
                Where-Object { [int]$_.InterfaceIndex -eq $index })
        if ($present.Count -gt 0) {
            Remove-NetIPAddress -InterfaceIndex $index -IPAddress $entry.IPAddress -Confirm:$false
            Write-Host "    Removed $($entry.IPAddress) from '$($entry.InterfaceAlias)'"
        }
        else {
            Write-Host "    $($entry.IPAddress) on '$($entry.InterfaceAlias)' is already gone"
        }
        $ipInterface = Get-NetIPInterface -InterfaceIndex $index -AddressFamily IPv4 -ErrorAction SilentlyContinue
        if ([string]$entry.Dhcp -eq 'Enabled' -and $null -ne $ipInterface -and [string]$ipInterface.Dhcp -ne 'Enabled') {
            Set-NetIPInterface -InterfaceIndex $index -AddressFamily IPv4 -Dhcp Enabled
            Write-Host "    DHCP turned back on for '$($entry.InterfaceAlias)'"
        }
    }
    $state = Read-DcbndkState
    $state.Remove('ip_addresses')
    Write-DcbndkState -State $state
}

# ---- SMB objects made by Test-SmbDirect.ps1 ------------------------------------------------

function Undo-DcbndkSmb {
    <#
    Removes, in this order, the SMB mappings, the multichannel constraints and the shares
    Test-SmbDirect.ps1 recorded, and the share folders it created (with the files in them).
    A mapping belongs to the logon session that made it: run this from the same elevated
    session, or it is already gone with that session's logoff.
    #>
    $state = Read-DcbndkState
    foreach ($remotePath in (Get-DcbndkStateList -State $state -Name 'smb_mappings')) {
        if (@(Get-SmbMapping -RemotePath $remotePath -ErrorAction SilentlyContinue).Count -gt 0) {
            Remove-SmbMapping -RemotePath $remotePath -Force -UpdateProfile
            Write-Host "    Remove-SmbMapping $remotePath"
        }
    }
    foreach ($constraint in (Get-DcbndkStateList -State $state -Name 'smb_constraints')) {
        $present = @(Get-SmbMultichannelConstraint -ServerName $constraint.ServerName -ErrorAction SilentlyContinue |
                Where-Object { [int]$_.InterfaceIndex -eq [int]$constraint.InterfaceIndex })
        if ($present.Count -gt 0) {
            Remove-SmbMultichannelConstraint -ServerName $constraint.ServerName -InterfaceIndex ([uint32]$constraint.InterfaceIndex) -Force
            Write-Host "    Remove-SmbMultichannelConstraint $($constraint.ServerName) interface $($constraint.InterfaceIndex)"
        }
    }
    foreach ($share in (Get-DcbndkStateList -State $state -Name 'smb_shares')) {
        if (Get-SmbShare -Name $share.Name -ErrorAction SilentlyContinue) {
            Remove-SmbShare -Name $share.Name -Force
            Write-Host "    Remove-SmbShare $($share.Name)"
        }
        if ($share.CreatedFolder -and (Test-Path -LiteralPath $share.Path)) {
            Remove-Item -LiteralPath $share.Path -Recurse -Force
            Write-Host "    Deleted $($share.Path)"
        }
    }
    $state = Read-DcbndkState
    $state.Remove('smb_mappings')
    $state.Remove('smb_constraints')
    $state.Remove('smb_shares')
    Write-DcbndkState -State $state
}

# ---- PowerShell Gallery modules -----------------------------------------------------------

function Install-DcbndkGalleryModule {
    <#
    Makes module $Name version $Version available, installing it from the PowerShell Gallery
    (Install-Module -Scope AllUsers) only when that version is absent. PowerShellGet 1.x (in the
    box with Windows PowerShell 5.1) needs the NuGet package provider 2.8.5.201 or later; it is
    installed too when absent. Whatever is installed here is recorded: the module as name and
    version (Uninstall-Module), the provider as the folders it added.
    #>
    param([Parameter(Mandatory)] [string] $Name, [Parameter(Mandatory)] [string] $Version)
    $present = @(Get-Module -ListAvailable -Name $Name | Where-Object { [string]$_.Version -eq $Version })
    if ($present.Count -gt 0) {
        Write-Host "    $Name $Version is already installed ($($present[0].ModuleBase))"
        return
    }
    # Windows PowerShell 5.1 may offer only TLS 1.0/1.1, which the Gallery refuses; this changes
    # the current process only.
    [Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12
    $nuget = @(Get-PackageProvider -ListAvailable -Name 'NuGet' -ErrorAction SilentlyContinue |
            Where-Object { [version]([string]$_.Version) -ge [version]'2.8.5.201' })
    if ($nuget.Count -eq 0) {
        $providerRoot = Join-Path $env:ProgramFiles 'PackageManagement\ProviderAssemblies'
        $before = @()
        if (Test-Path -LiteralPath $providerRoot) {
            $before = @(Get-ChildItem -LiteralPath $providerRoot -Recurse -Directory | ForEach-Object { $_.FullName })
        }
        $null = Install-PackageProvider -Name 'NuGet' -MinimumVersion '2.8.5.201' -Scope AllUsers -Force
        $added = @()
        if (Test-Path -LiteralPath $providerRoot) {
            $added = @(Get-ChildItem -LiteralPath $providerRoot -Recurse -Directory |
                    ForEach-Object { $_.FullName } | Where-Object { $before -notcontains $_ })
        }
        # Only the topmost new folders: removing them removes the rest.
        $top = @($added | Where-Object {
                $folder = $_
                @($added | Where-Object { $folder.StartsWith($_ + '\') }).Count -eq 0
            })
        foreach ($folder in $top) {
            Add-DcbndkStateItem -Name 'package_provider_folders' -Item $folder
            Write-Host "    Installed the NuGet package provider into $folder"
        }
    }
    Add-DcbndkStateItem -Name 'gallery_modules' -Item ([pscustomobject]@{ Name = $Name; Version = $Version })
    Install-Module -Name $Name -RequiredVersion $Version -Repository 'PSGallery' -Scope AllUsers -Force
    $installed = @(Get-Module -ListAvailable -Name $Name | Where-Object { [string]$_.Version -eq $Version })
    if ($installed.Count -eq 0) {
        throw "Install-Module $Name -RequiredVersion $Version returned but the module is not listed"
    }
    Write-Host "    Installed $Name $Version into $($installed[0].ModuleBase)"
}

function Undo-DcbndkGalleryModule {
    <# Uninstalls the modules and deletes the package-provider folders Install-DcbndkGalleryModule recorded. #>
    $state = Read-DcbndkState
    foreach ($module in (Get-DcbndkStateList -State $state -Name 'gallery_modules')) {
        Remove-Module -Name $module.Name -Force -ErrorAction SilentlyContinue
        if (Get-InstalledModule -Name $module.Name -RequiredVersion $module.Version -ErrorAction SilentlyContinue) {
            Uninstall-Module -Name $module.Name -RequiredVersion $module.Version -Force
            Write-Host "    Uninstall-Module $($module.Name) $($module.Version)"
        }
        else {
            Write-Host "    $($module.Name) $($module.Version) is already gone"
        }
    }
    foreach ($folder in (Get-DcbndkStateList -State $state -Name 'package_provider_folders')) {
        if (Test-Path -LiteralPath $folder) {
            Remove-Item -LiteralPath $folder -Recurse -Force
            Write-Host "    Deleted $folder"
        }
    }
    $state = Read-DcbndkState
    $state.Remove('gallery_modules')
    $state.Remove('package_provider_folders')
    Write-DcbndkState -State $state
}

# ---- Firewall rules Test-NetStack -EnableFirewallRules touches -----------------------------

# Test-NetStack 2024.5.1.189 (helpers/prerequisites.psm1, Test-NetStackPrerequisites) enables
# these built-in rules by name, the rules with the display name 'Windows Remote Management
# (HTTP-In)', and creates the rule 'Test-NetStack - NTTTCP' (stage 2).
$script:DcbndkTestNetStackRuleNames = @(
    'FPS-ICMP4-ERQ-In', 'FPS-ICMP6-ERQ-In', 'FPS-ICMP4-ERQ-In-NoScope', 'FPS-ICMP6-ERQ-In-NoScope',
    'FPSSMBD-iWARP-In-TCP')
$script:DcbndkTestNetStackRuleDisplayNames = @('Windows Remote Management (HTTP-In)', 'Test-NetStack - NTTTCP')

function Get-DcbndkTestNetStackRule {
    $rules = @()
    foreach ($name in $script:DcbndkTestNetStackRuleNames) {
        $rules += @(Get-NetFirewallRule -Name $name -ErrorAction SilentlyContinue)
    }
    foreach ($displayName in $script:DcbndkTestNetStackRuleDisplayNames) {
        $rules += @(Get-NetFirewallRule -DisplayName $displayName -ErrorAction SilentlyContinue)
    }
    return , @($rules)
}

function Save-DcbndkFirewallRule {
    <# Records the Enabled state of every rule Test-NetStack may touch, before it runs. #>
    $state = Read-DcbndkState
    if ($state.ContainsKey('firewall_rules')) {
        Write-Host '    The rules are already recorded (from an earlier run): kept'
        return
    }
    $rules = @((Get-DcbndkTestNetStackRule) | ForEach-Object {
            [pscustomobject]@{ Name = [string]$_.Name; Enabled = [string]$_.Enabled }
        })
    $state['firewall_rules'] = $rules
    Write-DcbndkState -State $state
    Write-Host "    Recorded $($rules.Count) firewall rules"
}

function Undo-DcbndkFirewallRule {
    <# Restores the recorded rules' Enabled state and removes the rules that were not there before. #>
    $state = Read-DcbndkState
    if (-not $state.ContainsKey('firewall_rules')) {
        return
    }
    $recorded = Get-DcbndkStateList -State $state -Name 'firewall_rules'
    foreach ($rule in (Get-DcbndkTestNetStackRule)) {
        $before = @($recorded | Where-Object { $_.Name -eq [string]$rule.Name })
        if ($before.Count -eq 0) {
            # Not there when recorded: Test-NetStack created it.
            Remove-NetFirewallRule -Name $rule.Name
            Write-Host "    Removed the firewall rule '$($rule.DisplayName)'"
        }
        elseif ([string]$rule.Enabled -ne [string]$before[0].Enabled) {
            Set-NetFirewallRule -Name $rule.Name -Enabled $before[0].Enabled
            Write-Host "    Firewall rule '$($rule.DisplayName)' back to Enabled = $($before[0].Enabled)"
        }
    }
    $state = Read-DcbndkState
    $state.Remove('firewall_rules')
    Write-DcbndkState -State $state
}

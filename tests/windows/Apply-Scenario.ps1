#Requires -Version 5.1
<#
.SYNOPSIS
Applies one scenario file's DCB configuration through the NetQos cmdlets, as an administrator
would: traffic classes, priority flow control, QoS policies and the DCBX willing bit.

.DESCRIPTION
    .\Apply-Scenario.ps1 -Scenario scenarios\ets-smb-direct.toml

Steps (the script stops at the first one that fails and says which):
 1. checks it runs elevated and reads the scenario (README.md, "Scenario files");
 2. Enable-DcbQos.ps1: the Data Center Bridging feature and Enable-NetAdapterQos;
 3. undoes the previous scenario applied by these scripts, if any, and records the flow-control
    and DCBX settings as they are now (Uninstall-Dcbndk.ps1 restores them);
 4. New-NetQosTrafficClass for each [[traffic_class]];
 5. Enable-NetQosFlowControl for the priorities of [flow_control] enabled, and
    Disable-NetQosFlowControl for the others;
 6. New-NetQosPolicy for each [[policy]];
 7. Set-NetQosDcbxSetting -Willing from [dcbx] willing;
 8. shows the configuration and the adapter's Get-NetAdapterQos view.

A traffic class or policy of the same name that these scripts did not create is never touched:
the script stops instead. Then run Test-Scenario.ps1 with the same file.

.PARAMETER Scenario
The scenario file (TOML subset, see README.md).

.PARAMETER HardwareId
Overrides the scenario's [adapter] hardware_id.
#>
[CmdletBinding()]
param(
    [Parameter(Mandatory)] [string] $Scenario,
    [string] $HardwareId = ''
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
. (Join-Path $PSScriptRoot 'DcbndkCommon.ps1')

$PolicyTemplates = @('Default', 'SMB', 'iSCSI', 'NFS', 'LiveMigration', 'Cluster', 'FCOE')

try {
    Invoke-DcbndkStep 'Check prerequisites (elevation)' {
        Assert-DcbndkAdministrator
    }

    $definition = Invoke-DcbndkStep "Read the scenario $Scenario" {
        Read-DcbndkScenario -Path $Scenario
    }
    $adapterId = Get-DcbndkScenarioHardwareId -Scenario $definition -Override $HardwareId
    Write-Host "    Scenario '$($definition['name'])' on $adapterId"

    Invoke-DcbndkStep 'Enable DCB QoS (Enable-DcbQos.ps1)' {
        $global:LASTEXITCODE = 0
        & (Join-Path $PSScriptRoot 'Enable-DcbQos.ps1') -HardwareId $adapterId
        if ($LASTEXITCODE -ne 0) {
            throw 'Enable-DcbQos.ps1 failed (see above)'
        }
    }

    Invoke-DcbndkStep 'Undo the previous scenario, if any' {
        Undo-DcbndkQos
    }

    Invoke-DcbndkStep 'Record the flow-control and DCBX settings to restore later' {
        Save-DcbndkQosBaseline
    }

    $classes = Get-DcbndkScenarioList -Scenario $definition -Name 'traffic_class'
    foreach ($class in $classes) {
        $className = [string]$class['name']
        Invoke-DcbndkStep "New-NetQosTrafficClass '$className'" {
            if (Get-NetQosTrafficClass -Name $className -ErrorAction SilentlyContinue) {
                throw "a traffic class '$className' already exists and these scripts did not create it"
            }
            $algorithm = [string]$class['algorithm']
            $arguments = @{
                Name      = $className
                Algorithm = $algorithm
                Priority  = [byte[]]@($class['priorities'])
            }
            if ($algorithm -eq 'ETS') {
                if (-not $class.ContainsKey('bandwidth')) {
                    throw "ETS traffic class '$className' needs a bandwidth"
                }
                $arguments['BandwidthPercentage'] = [byte]$class['bandwidth']
            }
            elseif ($algorithm -eq 'Strict') {
                if ($class.ContainsKey('bandwidth')) {
                    throw "Strict traffic class '$className' takes no bandwidth"
                }
            }
            else {
                throw "algorithm '$algorithm' is neither ETS nor Strict"
            }
            $null = New-NetQosTrafficClass @arguments
            Add-DcbndkStateItem -Name 'qos_traffic_classes' -Item $className
        }
    }

    if ($definition.ContainsKey('flow_control')) {
        Invoke-DcbndkStep 'Set priority flow control (Enable/Disable-NetQosFlowControl)' {
            $enabled = @()
            if ($definition['flow_control'].ContainsKey('enabled')) {
                $enabled = [byte[]]@($definition['flow_control']['enabled'])
            }
            $disabled = [byte[]]@(0..7 | Where-Object { $enabled -notcontains $_ })
            if ($enabled.Count -gt 0) {
                Enable-NetQosFlowControl -Priority $enabled
            }
            if ($disabled.Count -gt 0) {
                Disable-NetQosFlowControl -Priority $disabled
            }
            Write-Host "    Enabled on: $($enabled -join ','); disabled on: $($disabled -join ',')"
        }
    }

    $policies = Get-DcbndkScenarioList -Scenario $definition -Name 'policy'
    foreach ($policy in $policies) {
        $policyName = [string]$policy['name']
        Invoke-DcbndkStep "New-NetQosPolicy '$policyName'" {
            if (Get-NetQosPolicy -Name $policyName -ErrorAction SilentlyContinue) {
                throw "a QoS policy '$policyName' already exists and these scripts did not create it"
            }
            $arguments = @{
                Name                    = $policyName
                PriorityValue8021Action = [sbyte]$policy['priority']
            }
            $conditions = @('netdirect_port', 'template', 'ip_dst_port' | Where-Object { $policy.ContainsKey($_) })
            if ($conditions.Count -ne 1) {
                throw "policy '$policyName' needs exactly one of netdirect_port, template, ip_dst_port"
            }
            if ($policy.ContainsKey('netdirect_port')) {
                $arguments['NetDirectPortMatchCondition'] = [uint16]$policy['netdirect_port']
            }
            elseif ($policy.ContainsKey('template')) {
                # One literal switch per template, so that the parameter names can be checked
                # against the cmdlet table (conformance::powershell_meaning).
                $template = [string]$policy['template']
                switch -Exact ($template) {
                    'Default' { $arguments['Default'] = $true }
                    'SMB' { $arguments['SMB'] = $true }
                    'iSCSI' { $arguments['iSCSI'] = $true }
                    'NFS' { $arguments['NFS'] = $true }
                    'LiveMigration' { $arguments['LiveMigration'] = $true }
                    'Cluster' { $arguments['Cluster'] = $true }
                    'FCOE' { $arguments['FCOE'] = $true }
                    default { throw "template '$template' is not one of $($PolicyTemplates -join ', ')" }
                }
            }
            else {
                $arguments['IPDstPortMatchCondition'] = [uint16]$policy['ip_dst_port']
                $protocol = 'TCP'
                if ($policy.ContainsKey('ip_protocol')) {
                    $protocol = [string]$policy['ip_protocol']
                }
                $arguments['IPProtocolMatchCondition'] = $protocol
            }
            $null = New-NetQosPolicy @arguments
            Add-DcbndkStateItem -Name 'qos_policies' -Item $policyName
        }
    }

    if ($definition.ContainsKey('dcbx') -and $definition['dcbx'].ContainsKey('willing')) {
        $willing = [bool]$definition['dcbx']['willing']
        Invoke-DcbndkStep "Set-NetQosDcbxSetting -Willing $willing" {
            Set-NetQosDcbxSetting -Willing $willing -Confirm:$false
        }
    }

    Invoke-DcbndkStep 'Show the configuration and the adapter view' {
        Get-NetQosTrafficClass | Format-Table -AutoSize | Out-String | Write-Host
        Get-NetQosFlowControl | Format-Table -AutoSize | Out-String | Write-Host
        Get-NetQosPolicy | Format-List | Out-String | Write-Host
        Get-NetQosDcbxSetting | Format-Table -AutoSize | Out-String | Write-Host
        $adapter = Get-DcbndkAdapter -HardwareId $adapterId
        Get-NetAdapterQos -Name $adapter.Name | Format-List | Out-String -Width 4096 | Write-Host
    }

    Write-Host "Scenario applied. Next: .\Test-Scenario.ps1 -Scenario $Scenario"
}
catch {
    Write-Host "FAILED: $($_.Exception.Message)" -ForegroundColor Red
    exit 1
}

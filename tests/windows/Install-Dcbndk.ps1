#Requires -Version 5.1
<#
.SYNOPSIS
Installs the test-signed dcbndk package on a test VM and creates its root-enumerated adapter(s).

.DESCRIPTION
Prerequisite, done once by hand because it needs a reboot (and Secure Boot off):

    bcdedit /set testsigning on
    shutdown /r /t 0

Then, from an elevated Windows PowerShell 5.1, with the package copied to the VM: the zip of
`cargo xtask package` (any host) unpacked, which holds x64\ (dcbndk.inf, dcbndk.sys, dcbndk.cat,
dcbndk-test.cer) and this folder as windows\, or the package `cargo make` builds in driver/
(target\<profile>\package):

    .\Install-Dcbndk.ps1 -PackageDir ..\x64

Steps (the script stops at the first one that fails and says which):
 1. checks it runs elevated and that the running boot has test signing on;
 2. checks the package holds dcbndk.sys, dcbndk.inf and dcbndk.cat;
 3. imports the test certificate (-CertificatePath, else dcbndk-test.cer or the cargo-make
    build's WDRLocalTestCert.cer in PackageDir or its parent folder) into LocalMachine\Root and
    LocalMachine\TrustedPublisher, unless already there;
 4. pnputil /add-driver dcbndk.inf /install;
 5. devgen /add /bus ROOT /hardwareid root\dcbndk (one device per -HardwareId);
 6. waits for the network adapter and shows it with its advanced properties.

Everything it adds is recorded in %ProgramData%\dcbndk\state.json for Uninstall-Dcbndk.ps1.

.PARAMETER PackageDir
Folder with dcbndk.sys, dcbndk.inf and dcbndk.cat.

.PARAMETER CertificatePath
The test certificate (.cer), relative to the current location or absolute. Default:
dcbndk-test.cer, else WDRLocalTestCert.cer, in PackageDir or its parent folder.

.PARAMETER HardwareId
The adapters to create. Give 'root\dcbndk','root\dcbndk_b' for two adapters (a DCBX pair).

.PARAMETER DevGenPath
devgen.exe from the WDK (Tools\<version>\x64). Default: PATH, then the installed Windows Kits.
#>
[CmdletBinding()]
param(
    [Parameter(Mandatory)] [string] $PackageDir,
    [string] $CertificatePath,
    [ValidateSet('root\dcbndk', 'root\dcbndk_b')] [string[]] $HardwareId = @('root\dcbndk'),
    [string] $DevGenPath
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
. (Join-Path $PSScriptRoot 'DcbndkCommon.ps1')

try {
    Invoke-DcbndkStep 'Check prerequisites (elevation, test signing)' {
        Assert-DcbndkAdministrator
        if (-not (Test-DcbndkTestSigning)) {
            throw ('Test signing is off in this boot. Run "bcdedit /set testsigning on" from an ' +
                'elevated prompt (Secure Boot must be off), reboot, and run this script again.')
        }
        $state = Read-DcbndkState
        $installed = Get-DcbndkStateList -State $state -Name 'driver_packages'
        if ($installed.Count -gt 0) {
            throw "dcbndk is already installed ($($installed -join ', ')): run Uninstall-Dcbndk.ps1 first."
        }
    }

    $package = Invoke-DcbndkStep "Check the package in $PackageDir" {
        if (-not (Test-Path -LiteralPath $PackageDir -PathType Container)) {
            throw "No folder $PackageDir"
        }
        # ProviderPath, not Path: pnputil gets it, and Path keeps a provider qualifier for a UNC
        # path (a package on a share).
        $dir = (Resolve-Path -LiteralPath $PackageDir).ProviderPath
        foreach ($file in @('dcbndk.sys', 'dcbndk.inf', 'dcbndk.cat')) {
            if (-not (Test-Path -LiteralPath (Join-Path $dir $file) -PathType Leaf)) {
                throw "$file is missing from $dir (cargo xtask package makes the package)"
            }
        }
        $dir
    }

    Invoke-DcbndkStep 'Trust the test certificate (LocalMachine Root and TrustedPublisher)' {
        if ($CertificatePath) {
            if (-not (Test-Path -LiteralPath $CertificatePath -PathType Leaf)) {
                throw "No certificate file $CertificatePath"
            }
            $candidates = @($CertificatePath)
        }
        else {
            $candidates = @(
                (Join-Path $package 'dcbndk-test.cer'),
                (Join-Path $package 'WDRLocalTestCert.cer'),
                (Join-Path (Split-Path -Parent $package) 'dcbndk-test.cer'),
                (Join-Path (Split-Path -Parent $package) 'WDRLocalTestCert.cer'))
        }
        $found = @($candidates | Where-Object { Test-Path -LiteralPath $_ -PathType Leaf })
        if ($found.Count -eq 0) {
            throw "No test certificate: give -CertificatePath (looked for $($candidates -join ', '))"
        }
        # One absolute path for both readers: X509Certificate2 resolves a relative path against
        # the process's current directory ([Environment]::CurrentDirectory), which PowerShell does
        # not move with Set-Location, and Import-Certificate against the PowerShell location
        # ($PWD); they would read two different files, or one would find none.
        $cer = (Resolve-Path -LiteralPath $found[0]).ProviderPath
        $certificate = New-Object System.Security.Cryptography.X509Certificates.X509Certificate2 -ArgumentList $cer
        foreach ($store in @('Root', 'TrustedPublisher')) {
            $location = "Cert:\LocalMachine\$store"
            if (Test-Path -LiteralPath (Join-Path $location $certificate.Thumbprint)) {
                Write-Host "    $($certificate.Subject) is already in $location"
                continue
            }
            $null = Import-Certificate -FilePath $cer -CertStoreLocation $location
            Add-DcbndkStateItem -Name 'certificates' -Item ([pscustomobject]@{
                    Store = $store; Thumbprint = $certificate.Thumbprint
                })
            Write-Host "    Imported $($certificate.Subject) into $location"
        }
    }

    Invoke-DcbndkStep 'Add the driver package to the driver store (pnputil /add-driver /install)' {
        $before = @(Get-WindowsDriver -Online | ForEach-Object { $_.Driver })
        $inf = Join-Path $package 'dcbndk.inf'
        # 259 (ERROR_NO_MORE_ITEMS): added, but no device matches yet (devgen creates it next);
        # 3010: added, a reboot completes it.
        $result = Invoke-DcbndkNative -FilePath 'pnputil.exe' -ArgumentList @('/add-driver', $inf, '/install') -SuccessCode @(0, 259, 3010)
        Write-Host $result.Output
        $added = @(Get-WindowsDriver -Online | Where-Object {
                $before -notcontains $_.Driver -and (Split-Path -Leaf $_.OriginalFileName) -eq 'dcbndk.inf'
            })
        if ($added.Count -eq 0) {
            throw 'pnputil succeeded but no new dcbndk.inf package is in the driver store'
        }
        foreach ($driver in $added) {
            Add-DcbndkStateItem -Name 'driver_packages' -Item $driver.Driver
            Write-Host "    Published as $($driver.Driver)"
        }
    }

    Invoke-DcbndkStep "Create the root-enumerated device(s) $($HardwareId -join ', ') (devgen)" {
        $devgen = Find-DcbndkDevGen -DevGenPath $DevGenPath
        if (-not $devgen) {
            throw 'devgen.exe not found: copy it from the WDK (Tools\<version>\x64) and give -DevGenPath'
        }
        foreach ($id in $HardwareId) {
            $before = @(Get-DcbndkDevice -HardwareId $id | ForEach-Object { $_.InstanceId })
            # /bus ROOT: a root-enumerated device that survives a reboot (the default, SWD, does not).
            $result = Invoke-DcbndkNative -FilePath $devgen -ArgumentList @('/add', '/bus', 'ROOT', '/hardwareid', $id)
            Write-Host $result.Output
            $created = @(Get-DcbndkDevice -HardwareId $id | Where-Object { $before -notcontains $_.InstanceId })
            if ($created.Count -eq 0) {
                throw "devgen succeeded but no device with hardware id $id appeared"
            }
            foreach ($device in $created) {
                Add-DcbndkStateItem -Name 'devices' -Item $device.InstanceId
                Write-Host "    Created $($device.InstanceId)"
            }
        }
    }

    Invoke-DcbndkStep 'Wait for the network adapter(s) to start' {
        foreach ($id in $HardwareId) {
            $deadline = (Get-Date).AddSeconds(60)
            $adapter = $null
            while ($null -eq $adapter) {
                try {
                    $adapter = Get-DcbndkAdapter -HardwareId $id
                }
                catch {
                    if ((Get-Date) -gt $deadline) {
                        $devices = Get-DcbndkDevice -HardwareId $id | Format-Table -AutoSize Status, Problem, InstanceId | Out-String
                        throw "No adapter for $id after 60 s: $($_.Exception.Message)`n$devices"
                    }
                    Start-Sleep -Seconds 2
                }
            }
            $adapter | Format-List -Property Name, InterfaceDescription, Status, LinkSpeed, MacAddress, PnPDeviceID | Out-String | Write-Host
            Get-NetAdapterAdvancedProperty -Name $adapter.Name -AllProperties |
                Format-Table -AutoSize DisplayName, RegistryKeyword, DisplayValue, RegistryValue | Out-String | Write-Host
        }
    }

    Write-Host 'dcbndk is installed. Next: .\Apply-Scenario.ps1 -Scenario scenarios\<file>.toml'
}
catch {
    Write-Host "FAILED: $($_.Exception.Message)" -ForegroundColor Red
    exit 1
}

; Included by electron-builder's NSIS installer (nsis.include in electron-builder.yml).
;
; Sluice offers itself in Explorer's "Open with" list for disk images and the archives they ship
; in, and takes no extension over. electron-builder's own fileAssociations would make Sluice the
; default for .zip, .iso and .img (replacing Explorer's "Extract" and "Mount") and leave them
; pointing at nothing after an uninstall. The extension list matches fileAssociations in
; electron-builder.yml (test/packaging/electron-builder-config.test.ts checks that).

!define SLUICE_PROGID "Sluice.Image"

!macro sluiceOfferFor EXT
  WriteRegNone SHELL_CONTEXT "Software\Classes\.${EXT}\OpenWithProgids" "${SLUICE_PROGID}"
!macroend

!macro sluiceWithdrawFrom EXT
  DeleteRegValue SHELL_CONTEXT "Software\Classes\.${EXT}\OpenWithProgids" "${SLUICE_PROGID}"
!macroend

!macro customInstall
  WriteRegStr SHELL_CONTEXT "Software\Classes\${SLUICE_PROGID}" "" "Disk image"
  WriteRegStr SHELL_CONTEXT "Software\Classes\${SLUICE_PROGID}\DefaultIcon" "" "$appExe,0"
  WriteRegStr SHELL_CONTEXT "Software\Classes\${SLUICE_PROGID}\shell\open" "" "Write to a drive with Sluice"
  WriteRegStr SHELL_CONTEXT "Software\Classes\${SLUICE_PROGID}\shell\open\command" "" '"$appExe" "%1"'
  !insertmacro sluiceOfferFor img
  !insertmacro sluiceOfferFor iso
  !insertmacro sluiceOfferFor xz
  !insertmacro sluiceOfferFor gz
  !insertmacro sluiceOfferFor zst
  !insertmacro sluiceOfferFor zip
  !insertmacro sluiceOfferFor dmg
  !insertmacro sluiceOfferFor qcow2
  ; SHChangeNotify(SHCNE_ASSOCCHANGED, SHCNF_FLUSH): Explorer rereads associations now, not at next logon.
  System::Call "shell32::SHChangeNotify(i 0x08000000, i 0x1000, i 0, i 0)"
!macroend

!macro customUnInstall
  !insertmacro sluiceWithdrawFrom img
  !insertmacro sluiceWithdrawFrom iso
  !insertmacro sluiceWithdrawFrom xz
  !insertmacro sluiceWithdrawFrom gz
  !insertmacro sluiceWithdrawFrom zst
  !insertmacro sluiceWithdrawFrom zip
  !insertmacro sluiceWithdrawFrom dmg
  !insertmacro sluiceWithdrawFrom qcow2
  DeleteRegKey SHELL_CONTEXT "Software\Classes\${SLUICE_PROGID}"
  System::Call "shell32::SHChangeNotify(i 0x08000000, i 0x1000, i 0, i 0)"
!macroend

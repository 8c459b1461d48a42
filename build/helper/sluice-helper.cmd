@echo off
rem The packaged app's privileged helper, as UAC starts it (elevated). See build/helper/sluice-helper
rem for why it exists; this is the same for Windows, next to app.asar in <resources>.
setlocal
set ELECTRON_RUN_AS_NODE=1
set NODE_OPTIONS=
"%~dp0..\Sluice.exe" --max-semi-space-size=1 --no-opt --no-maglev "%~dp0app.asar.unpacked\out\run\helper.js" %*
exit /b %ERRORLEVEL%

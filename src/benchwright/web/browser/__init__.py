"""Browser trials for the web track: Chromium, browser-use, our HAR recorder, scripted agents.

browser-use is an optional dependency (`pip install 'benchwright[web]'`): only the modules that
drive it import it, through `benchwright.web.browser.imports.browser_use_module`.
"""

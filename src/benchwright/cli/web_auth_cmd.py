"""`benchwright web auth capture`: log into a site through its form and save the cookies."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from benchwright.cli.json_output import echo_json
from benchwright.cli.option_checks import new_file
from benchwright.errors import UserInputError

app = typer.Typer(help="Site logins: capture cookies for trials.", no_args_is_help=True)


@app.command("capture")
def capture_cmd(
    site: Annotated[str, typer.Option("--site", help="shopping, reddit, gitlab...")],
    out: Annotated[Path, typer.Option("--out", parser=new_file,
                                      help="Where to write the cookies (JSON).")],
    config: Annotated[Path | None, typer.Option(
        "--config", help="Site URLs and credentials (YAML).")] = None,
    login_path: Annotated[str | None, typer.Option(
        help="The login page's path on the site (default: the site's usual one).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print what was saved as JSON.")]
    = False,
) -> None:
    """Log in with the web config's credentials in headless Chromium; save the cookies."""
    import asyncio

    from benchwright.web.browser.auth import capture_cookies, live_login
    from benchwright.web.browser.cdp import CdpConnection
    from benchwright.web.browser.cookies import save_cookies
    from benchwright.web.browser.shared_browser import SharedBrowser
    from benchwright.web.sites.config import Site, load_web_config

    target = Site.parse(site)
    if target is None:
        raise UserInputError(f"--site: unknown site {site!r}",
                             hint=f"known sites: {', '.join(s.value for s in Site)}")
    env_config = load_web_config(config)
    login = live_login(env_config, target, login_path)

    async def capture(browser: SharedBrowser) -> list[dict[str, object]]:
        connection = await CdpConnection.open(browser.running().ws_url)
        try:
            return await capture_cookies(connection, login)
        finally:
            await connection.close()

    with SharedBrowser(site_urls=[login.login_url]) as browser:
        cookies = asyncio.run(capture(browser))
    save_cookies(out, target.value, env_config.site(target).url or "", cookies)
    if as_json:
        echo_json({"site": target.value, "cookies": len(cookies), "out": str(out)})
        return
    typer.echo(f"saved {len(cookies)} cookies for {target} to {out}")

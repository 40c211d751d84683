"""What a session's tabs did since the last result, said once: tabs the pages opened (with
their index, URL and title as far as known), a tab that got its first URL after it was
announced, windows closed at the cap (one counted line), and the current tab closing.

Bounded: a note per kept tab (at most the tab cap's worth) and one line for all the refused.
"""

from __future__ import annotations

from ._page import Page

_BLANK = ("", "about:blank")


def tab_label(pages: list[Page], page: Page) -> str:
    """'tab 1 (https://idp.example/sign-in)'."""
    index = pages.index(page) if page in pages else "closed"
    return f"tab {index} ({page.url or 'about:blank'})"


def title_part(page: Page) -> str:
    """', title "Sign in"' once the tab has a title of its own (not its URL's stand-in)."""
    shown = page.title and page.title not in (page.url, page.url.split("://", 1)[-1])
    return f", title {page.title!r}" if shown else ""


class TabNotes:
    """Filled by the Tabs as things happen; `take` words them for the next result."""

    def __init__(self, max_tabs: int) -> None:
        self.max_tabs = max_tabs
        self.opened: list[Page] = []  # tabs the pages opened
        self.over_cap = 0  # windows closed as they opened, the cap being reached
        self.current_closed = ""  # "The current tab (...) closed; tab 0 (...) is now current."
        self.blank: list[Page] = []  # announced before they had a URL: said again once they do
        self.got_url: list[Page] = []  # of `blank`, those that now have one

    def url_known(self, page: Page) -> bool:
        """Whether `page`, announced as blank, now has a URL to announce (it leaves `blank`)."""
        if page in self.blank and page.url not in _BLANK:
            self.blank.remove(page)
            return True
        return False

    def take(self, pages: list[Page], current: Page) -> list[str]:
        notes = [
            f"Tab {pages.index(page)} now shows {page.url}{title_part(page)}."
            for page in self.got_url
            if page in pages
        ]
        kept = [page for page in self.opened if page in pages]
        notes += [
            f"The page opened a new tab ({page.url or 'about:blank'}), which has closed again."
            for page in self.opened
            if page not in pages
        ]
        if kept:
            notes.append(self._opened(pages, kept, current))
        if self.over_cap:
            notes.append(
                f"The page tried to open {self.over_cap} more tab(s); they were closed as they "
                f"opened, since this browser keeps at most {self.max_tabs} tabs "
                "(BROWSER_TOOL_MAX_TABS). Close a tab with browser_tabs, or navigate to the URL."
            )
        if self.current_closed:
            notes.append(self.current_closed)
        self.opened, self.got_url, self.over_cap, self.current_closed = [], [], 0, ""
        return notes

    def _opened(self, pages: list[Page], kept: list[Page], current: Page) -> str:
        """One note for every tab opened since the last result (the blank ones in one part),
        so that a page opening ten windows costs one line, not ten."""
        blank = [page for page in kept if page.url in _BLANK]
        self.blank += blank
        parts = [
            f"{tab_label(pages, page)}{title_part(page)}" for page in kept if page not in blank
        ]
        if blank:
            numbers = ", ".join(str(pages.index(page)) for page in blank)
            parts.append(f"tab{'s' if len(blank) > 1 else ''} {numbers} (about:blank so far)")
        what = "a new tab" if len(kept) == 1 else f"{len(kept)} new tabs"
        return (
            f"The page opened {what}: {'; '.join(parts)}. The current tab is still tab "
            f"{pages.index(current)}; use browser_tabs to select "
            f"{'it' if len(kept) == 1 else 'one'}."
        )

"""The full-screen chat app (Textual). Nothing outside this package imports Textual; the
conversation itself lives in `dialogue` and `replies`, which import no Textual either."""

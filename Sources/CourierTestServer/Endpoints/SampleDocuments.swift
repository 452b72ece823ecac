/// The fixed documents httpbin serves: `/json`, `/xml`, `/html`, `/encoding/utf8`, and the teapot.
enum SampleDocuments {
    /// `/json`.
    static let slideshow: JSONNode = [
        "slideshow": [
            "author": "Yours Truly",
            "date": "date of publication",
            "slides": [
                ["title": "Wake up to WonderWidgets!", "type": "all"],
                [
                    "items": ["Why <em>WonderWidgets</em> are great", "Who <em>buys</em> WonderWidgets"],
                    "title": "Overview",
                    "type": "all",
                ],
            ],
            "title": "Sample Slide Show",
        ]
    ]

    /// `/xml`.
    static let xml = """
        <?xml version='1.0' encoding='us-ascii'?>

        <!--  A SAMPLE set of slides  -->

        <slideshow
            title="Sample Slide Show"
            date="Date of publication"
            author="Yours Truly"
            >

            <!-- TITLE SLIDE -->
            <slide type="all">
              <title>Wake up to WonderWidgets!</title>
            </slide>

            <!-- OVERVIEW -->
            <slide type="all">
                <title>Overview</title>
                <item>Why <em>WonderWidgets</em> are great</item>
                <item/>
                <item>Who <em>buys</em> WonderWidgets</item>
            </slide>

        </slideshow>
        """

    /// `/html`.
    static let html = """
        <!DOCTYPE html>
        <html>
          <head>
          </head>
          <body>
              <h1>Herman Melville - Moby-Dick</h1>

              <div>
                <p>
                  Availing himself of the mild, summer-cool weather that now reigned in these latitudes, and in \
        preparation for the peculiarly active pursuits shortly to be anticipated, Perth, the begrimed, blistered old \
        blacksmith, had not removed his portable forge to the hold again, after concluding his contributory work for \
        Ahab's leg, but still retained it on deck, fast lashed to ringbolts by the foremast; being now almost \
        incessantly invoked by the headsmen, and harpooneers, and bowsmen to do some little job for them; altering, \
        or repairing, or new shaping their various weapons and boat furniture.
                </p>
              </div>
          </body>
        </html>
        """

    /// `/encoding/utf8`: a shorter cousin of httpbin's UTF-8 demo, with text in several scripts.
    static let utf8Demo = """
        <h1>Unicode Demo</h1>

        <pre>
        UTF-8 encoded sample plain-text file
        ‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾

        Mathematics and sciences:

          ∮ E⋅da = Q,  n → ∞, ∑ f(i) = ∏ g(i), ∀x∈ℝ: ⌈x⌉ = −⌊−x⌋, α ∧ ¬β = ¬(¬α ∨ β)

        Linguistics and dictionaries:

          ði ıntəˈnæʃənəl fəˈnɛtık əsoʊsiˈeıʃn
          Y [ˈʏpsilɔn], Yen [jɛn], Yoga [ˈjoːgɑ]

        Greek:      Σὲ γνωρίζω ἀπὸ τὴν κόψη τοῦ σπαθιοῦ τὴν τρομερή
        Russian:    Зарегистрируйтесь сейчас на Десятую Международную Конференцию
        Georgian:   გთხოვთ ახლავე გაიაროთ რეგისტრაცია
        Thai:       ๏ แผ่นดินฮั่นเสื่อมโทรมแสนสังเวช
        Amharic:    ሰማይ አይታረስ ንጉሥ አይከሰስ።
        Japanese:   いろはにほへど　ちりぬるを
        Chinese:    我能吞下玻璃而不伤身体。
        Runes:      ᚻᛖ ᚳᚹᚫᚦ ᚦᚫᛏ ᚻᛖ ᛒᚢᛞᛖ ᚩᚾ ᚦᚫᛗ ᛚᚪᚾᛞᛖ ᚾᚩᚱᚦᚹᛖᚪᚱᛞᚢᛗ ᚹᛁᚦ ᚦᚪ ᚹᛖᛥᚫ
        Emoji:      🚚 📦 ✉️ 🕊️
        </pre>
        """

    /// The body of `/status/418`.
    static let teapot = """

            -=[ teapot ]=-

               _...._
             .'  _ _ `.
            | ."` ^ `". _,
            \\_;`"---"`|//
              |       ;/
              \\_     _/
                `\"\"\"`

        """
}

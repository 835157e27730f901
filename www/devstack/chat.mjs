// Conversational answers for the mock LLM (`?reply=chat`, what the voice demo asks for): each
// depends on the question and on the persona in the system prompt (Ava is calm and brief, Max is
// upbeat), and knows how far the conversation has come, so talking to the demo feels like a
// conversation although no model is involved. Deterministic: the same messages, the same answer.

const TOPICS = [
  { words: /\b(weather|rain|sunny|sun|cold|warm|hot|temperature)\b/, ava: "I cannot see outside from here. Locally, it is always fair weather for testing. Bring a jacket just in case.", max: "Great question about the weather! From inside this laptop it looks perfectly sunny. Enjoy it!" },
  { words: /\b(time|clock|late|early|hour)\b/, ava: "I have no clock of my own. Your screen shows the time in a corner. I can wait while you look.", max: "Time flies when you are testing! Check the corner of your screen. It knows better than I do." },
  { words: /\b(joke|funny|laugh)\b/, ava: "Here is one. Why did the socket close with four four oh three? Its session had expired.", max: "Oh, I love this one! Why did the voice agent stop talking? Somebody barged in!" },
  { words: /\b(name|who are you|who is this)\b/, ava: "My name is Ava. I am the primary voice of this demo. Max takes over when I fail.", max: "I am Max, the fallback voice! I jump in when Ava cannot answer. Nice to meet you!" },
  { words: /\b(hello|hi|hey|morning|evening)\b/, ava: "Hello. I am listening. Ask me anything you like.", max: "Hey there! Great to hear you. What shall we talk about?" },
  { words: /\b(help|can you do|what can|how does)\b/, ava: "I answer short questions. Try the weather, the time or a joke. Or switch on a failure and watch the timeline.", max: "Loads of things! Ask about the weather, or for a joke. Then break the network and see what happens!" },
  { words: /\b(thank|thanks|bye|goodbye)\b/, ava: "You are welcome. Talk to you soon.", max: "Anytime! See you soon!" },
];

/** Every sentence a topic's answer says, in either persona (the room's recognizer grammar hears the agent's echo as these). */
export function topicSentences() {
  return TOPICS.flatMap((topic) => [topic.ava, topic.max]).flatMap((answer) => answer.match(/[^.!?]+[.!?]*/g) ?? []).map((sentence) => sentence.trim());
}

/** The persona named in the system prompt: "max" when it mentions Max, else "ava". */
export function personaOf(messages) {
  const system = messages.find((message) => message?.role === "system");
  return typeof system?.content === "string" && /\bmax\b/i.test(system.content) ? "max" : "ava";
}

/** The answer to the last user message of `messages`, in the persona's words. */
export function chatAnswer(messages, userText) {
  const persona = personaOf(messages);
  const question = userText.toLowerCase().trim();
  const asked = messages.filter((message) => message?.role === "user").length;
  if (question === "") return persona === "max" ? "Hmm, I did not catch that! Say it again?" : "I did not catch that. Could you repeat it?";
  const topic = TOPICS.find((candidate) => candidate.words.test(question));
  if (topic) return topic[persona];
  const echo = question.replace(/[.!?]+$/, "").slice(0, 120);
  const turn = asked > 1 ? ` That is question number ${asked} today.` : "";
  return persona === "max"
    ? `You said ${echo}! I am only a mock, so I cannot really answer that.${turn} Ask me for a joke instead!`
    : `I heard: ${echo}. I am a mock model, so I have no real answer to that.${turn} Try asking about the weather.`;
}

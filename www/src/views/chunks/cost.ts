// The code of the cost chapter's views (../chapters.ts), fetched as one file when the
// first of them comes into sight (../load.ts).
import '../../components/tp-cost';
import '../../components/tp-schedule';
import '../../components/tp-time';

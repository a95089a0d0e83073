{-# LANGUAGE OverloadedStrings #-}
-- | The /work computation of contract/CONTRACT.md: parse the JSON document,
-- validate it, parse every date into a timestamp, and build the answer.
module Work
  ( compute
  , parseDate
  , formatMillis
  ) where

import Control.Monad (foldM)
import Data.Aeson (Value, decodeStrict', pairs, withObject, withScientific, withText, (.:), (.=))
import Data.Aeson.Encoding (encodingToLazyByteString, pair)
import Data.Aeson.Types (Parser, parseMaybe)
import qualified Data.ByteString as B
import qualified Data.ByteString.Lazy as BL
import qualified Data.ByteString.Unsafe as BU
import Data.Scientific (toBoundedRealFloat)
import Data.Text (Text)
import qualified Data.Text as T
import Data.Text.Encoding (encodeUtf8)
import Data.Time.Calendar (Day (ModifiedJulianDay), fromGregorianValid, toGregorian, toModifiedJulianDay)
import Data.Word (Word8)

-- | What the answer is made of: product, requestId, balance, and the
-- earliest and latest date in milliseconds since 1858-11-17 (the Modified
-- Julian Day epoch; any fixed epoch orders the same).
data Answer = Answer !Text !Text !Double !Int !Int

-- | The answer body for a /work request body, or Nothing when the body must
-- be answered 400 (not JSON, not an object, a missing or null field, a field
-- of the wrong type, an empty dates list, an invalid date).
compute :: B.ByteString -> Maybe BL.ByteString
compute body = do
  v <- decodeStrict' body
  Answer p r bal mn mx <- parseMaybe document v
  pure $ encodingToLazyByteString $ pairs $
       "product" .= p
    <> "requestId" .= r
    <> pair "client" (pairs ( "balance" .= bal
                           <> "minDate" .= formatMillis mn
                           <> "maxDate" .= formatMillis mx))

-- aeson's FromJSON Text and Bool reject null, and withObject/withScientific
-- reject it too, so null counts as missing everywhere.
document :: Value -> Parser Answer
document = withObject "document" $ \o -> do
  p <- o .: "product"
  r <- o .: "requestId"
  g <- o .: "group"
  withObject "group" (\grp -> do
    _ <- grp .: "kind" :: Parser Text
    _ <- grp .: "default" :: Parser Bool
    bal <- grp .: "balance" >>= withScientific "balance" finite
    dates <- grp .: "dates" :: Parser [Value]
    case dates of
      [] -> fail "empty dates"
      (d : ds) -> do
        t0 <- date d
        (mn, mx) <- foldM (\(lo, hi) x -> do
                             t <- date x
                             pure (min lo t, max hi t)) (t0, t0) ds
        pure (Answer p r bal mn mx)) g
  where
    -- A number too large for a double is refused, as Go's encoding/json does.
    finite s = either (const (fail "balance out of range")) pure (toBoundedRealFloat s)
    date = withText "date" $ \t -> maybe (fail "invalid date") pure (parseDate t)

-- | Parse a contract timestamp, exactly @YYYY-MM-DDTHH:MM:SS.sssZ@ (24
-- characters), into milliseconds since the Modified Julian Day epoch. The
-- shape is checked character by character (digits where digits belong, so no
-- sign, space or offset gets in); the calendar date is checked by the time
-- library's 'fromGregorianValid' (month 01-12, 29 February only in leap
-- years); hour 00-23, minute and second 00-59 (no 24:00, no leap second).
parseDate :: Text -> Maybe Int
parseDate t
  | B.length s /= 24 = Nothing
  | not shapeOk = Nothing
  | hour > 23 || minute > 59 || second > 59 = Nothing
  | otherwise = do
      day <- fromGregorianValid (toInteger year) month dayOfMonth
      let dayNo = fromInteger (toModifiedJulianDay day) :: Int
      pure $ dayNo * 86400000 + hour * 3600000 + minute * 60000 + second * 1000 + milli
  where
    s = encodeUtf8 t
    at :: Int -> Word8
    at = BU.unsafeIndex s
    isDigitAt i = let c = at i in c >= 48 && c <= 57
    shapeOk =
         at 4 == 45 && at 7 == 45        -- '-'
      && at 10 == 84                      -- 'T'
      && at 13 == 58 && at 16 == 58      -- ':'
      && at 19 == 46                      -- '.'
      && at 23 == 90                      -- 'Z'
      && all isDigitAt [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22]
    num i n = foldl (\acc k -> acc * 10 + fromIntegral (at k) - 48) 0 [i .. i + n - 1] :: Int
    year = num 0 4
    month = num 5 2
    dayOfMonth = num 8 2
    hour = num 11 2
    minute = num 14 2
    second = num 17 2
    milli = num 20 3

-- | Write milliseconds since the Modified Julian Day epoch as
-- @YYYY-MM-DDTHH:MM:SS.sssZ@, always with three digits of milliseconds.
formatMillis :: Int -> Text
formatMillis ms = T.pack $
     pad 4 (fromInteger y) ++ "-" ++ pad 2 mo ++ "-" ++ pad 2 d
  ++ "T" ++ pad 2 h ++ ":" ++ pad 2 mi ++ ":" ++ pad 2 sec ++ "." ++ pad 3 milli ++ "Z"
  where
    (dayNo, inDay) = ms `divMod` 86400000
    (y, mo, d) = toGregorian (ModifiedJulianDay (toInteger dayNo))
    (h, r1) = inDay `divMod` 3600000
    (mi, r2) = r1 `divMod` 60000
    (sec, milli) = r2 `divMod` 1000
    pad :: Int -> Int -> String
    pad n x = let str = show x in replicate (n - length str) '0' ++ str
